package android.view.inputmethod;

/**
 * A stand-in for Android's android.view.inputmethod.InputMethodManager,
 * loaded by the boot class loader as the framework's is on a phone: a
 * process-wide instance that holds the input connection of the view last
 * edited (mCurrentInputConnection). On Samsung's Android 9 to 11 it keeps
 * that connection after its activity is destroyed, a leak LeakCanary's
 * Shark knows as a library leak there (AndroidReferenceMatchers
 * IMM_CURRENT_INPUT_CONNECTION: Build.MANUFACTURER "samsung", SDK_INT 28 to
 * 30), not the app's.
 */
public final class InputMethodManager {
    private static InputMethodManager sInstance;

    Object mCurrentInputConnection;

    private InputMethodManager() {
    }

    /** Returns the process's instance. */
    public static InputMethodManager getInstance() {
        if (sInstance == null) {
            sInstance = new InputMethodManager();
        }
        return sInstance;
    }

    /** Starts input on a view through its connection. */
    public void startInput(Object connection) {
        mCurrentInputConnection = connection;
    }
}
