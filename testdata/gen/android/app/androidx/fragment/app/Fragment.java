package androidx.fragment.app;

import androidx.lifecycle.Lifecycle;
import androidx.lifecycle.LifecycleRegistry;

/**
 * A stand-in for androidx.fragment.app.Fragment with the fields LeakCanary's
 * Shark reads: a Fragment whose mLifecycleRegistry's state is DESTROYED is
 * one it looks for leaks of.
 */
public class Fragment {
    LifecycleRegistry mLifecycleRegistry = new LifecycleRegistry();
    Object mFragmentManager;
    String mTag;
    boolean mCalled;
    int mState;

    /** Attaches the fragment to a manager and resumes it. */
    public void resume(Object manager, String tag) {
        mFragmentManager = manager;
        mTag = tag;
        mCalled = true;
        mState = 7;
        mLifecycleRegistry.setCurrentState(Lifecycle.State.RESUMED);
    }

    /** Destroys the fragment, as its manager does when it is removed. */
    public void destroy() {
        mFragmentManager = null;
        mState = -1;
        mLifecycleRegistry.setCurrentState(Lifecycle.State.DESTROYED);
    }
}
