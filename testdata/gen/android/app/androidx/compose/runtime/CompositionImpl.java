package androidx.compose.runtime;

/**
 * A stand-in for Compose's androidx.compose.runtime.CompositionImpl, with
 * the field LeakCanary's Shark reads: a composition whose disposed is true
 * leaks if it is still reachable, one whose disposed is false does not
 * (AndroidObjectInspectors.COMPOSITION_IMPL).
 */
public class CompositionImpl {
    private final Object parent;
    private Object composable;
    private boolean disposed;

    public CompositionImpl(Object parent) {
        this.parent = parent;
    }

    /** Sets the composition's content. */
    public void setContent(Object content) {
        composable = content;
    }

    /** Disposes of the composition, as its host does when it goes. */
    public void dispose() {
        disposed = true;
    }
}
