package android.app;

/**
 * A stand-in for Android's android.app.Activity, loaded by the boot class
 * loader (-Xbootclasspath/a) as the framework's is on a phone, with the
 * fields of its lifecycle: LeakCanary's Shark takes an Activity whose
 * mDestroyed is true for one that leaks if it is still reachable.
 */
public class Activity {
    boolean mDestroyed;
    boolean mFinished;
    boolean mResumed;
    int mResultCode;
    Object mTitle;

    /** Creates and resumes the activity, as the framework does. */
    public void performCreate(String title) {
        mTitle = title;
        mResumed = true;
    }

    /** Finishes the activity with a result. */
    public void finish(int resultCode) {
        mResultCode = resultCode;
        mFinished = true;
    }

    /** Destroys the activity, as the framework does after it finishes. */
    public void performDestroy() {
        mResumed = false;
        mDestroyed = true;
    }
}
