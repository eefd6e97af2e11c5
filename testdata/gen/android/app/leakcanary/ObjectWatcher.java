package leakcanary;

import java.lang.ref.ReferenceQueue;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A stand-in for LeakCanary's leakcanary.ObjectWatcher: the references to
 * the objects it watches, by key.
 */
public final class ObjectWatcher {
    private final Map<String, KeyedWeakReference> watchedObjects = new LinkedHashMap<>();
    private final ReferenceQueue<Object> queue = new ReferenceQueue<>();

    /** Watches object from uptimeMillis on, as LeakCanary does once the object's life ended. */
    public KeyedWeakReference watch(Object object, String key, String description, long uptimeMillis) {
        KeyedWeakReference ref = new KeyedWeakReference(object, key, description, uptimeMillis, queue);
        watchedObjects.put(key, ref);
        return ref;
    }
}
