package androidx.lifecycle;

/**
 * A stand-in for androidx.lifecycle.LifecycleRegistry (its Java version,
 * whose state field is mState), whose state Shark reads.
 */
public class LifecycleRegistry extends Lifecycle {
    private State mState = State.INITIALIZED;

    /** Moves the registry to state s. */
    public void setCurrentState(State s) {
        mState = s;
    }
}
