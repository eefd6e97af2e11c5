package android.os;

/**
 * A stand-in for Android's android.os.Looper, loaded by the boot class
 * loader as the framework's is on a phone: sMainLooper is the main thread's
 * Looper, mThread its thread. Decrunch finds the main thread by them, and
 * writes back its name, "main", which LeakCanary's Shark reads.
 */
public final class Looper {
    private static Looper sMainLooper;

    final Thread mThread = Thread.currentThread();

    private Looper() {
    }

    /** Makes the current thread's Looper the main one, as ActivityThread.main does. */
    public static void prepareMainLooper() {
        sMainLooper = new Looper();
    }
}
