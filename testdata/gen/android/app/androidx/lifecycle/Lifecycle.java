package androidx.lifecycle;

/** A stand-in for androidx.lifecycle.Lifecycle: its State enum. */
public abstract class Lifecycle {
    /** The lifecycle states, as androidx names them. */
    public enum State {
        DESTROYED, INITIALIZED, CREATED, STARTED, RESUMED
    }
}
