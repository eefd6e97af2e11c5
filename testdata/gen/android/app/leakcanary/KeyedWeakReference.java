package leakcanary;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;

/**
 * A stand-in for LeakCanary's leakcanary.KeyedWeakReference (2.x), with the
 * fields its Kotlin class compiles to: the reference to an object that
 * LeakCanary watches, the times (the device's uptime, in milliseconds) it
 * began watching it and found it retained (-1: not yet), and the static
 * time of the last heap dump. LeakCanary's Shark takes every watched object
 * found retained for one that leaks (KeyedWeakReferenceFinder).
 */
public final class KeyedWeakReference extends WeakReference<Object> {
    private static volatile long heapDumpUptimeMillis;

    private final String key;
    private final String description;
    private final long watchUptimeMillis;
    private volatile long retainedUptimeMillis = -1L;

    public KeyedWeakReference(Object referent, String key, String description, long watchUptimeMillis, ReferenceQueue<Object> queue) {
        super(referent, queue);
        this.key = key;
        this.description = description;
        this.watchUptimeMillis = watchUptimeMillis;
    }

    public String getKey() {
        return key;
    }

    public void setRetainedUptimeMillis(long uptimeMillis) {
        retainedUptimeMillis = uptimeMillis;
    }

    public static void setHeapDumpUptimeMillis(long uptimeMillis) {
        heapDumpUptimeMillis = uptimeMillis;
    }
}
