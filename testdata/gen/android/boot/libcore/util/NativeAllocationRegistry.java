package libcore.util;

import sun.misc.Cleaner;

/**
 * A stand-in for Android's libcore.util.NativeAllocationRegistry (API 24
 * and later), with the fields LeakCanary's Shark and Android Studio read:
 * the native bytes of each allocation it registers (size). A registered
 * object's cleaner holds a thunk of the registry (CleanerThunk.this$0).
 */
public class NativeAllocationRegistry {
    private final ClassLoader classLoader;
    private final long freeFunction;
    private final long size;

    public NativeAllocationRegistry(ClassLoader classLoader, long freeFunction, long size) {
        this.classLoader = classLoader;
        this.freeFunction = freeFunction;
        this.size = size;
    }

    /** Registers the native allocation at nativePtr as referent's. */
    public Runnable registerNativeAllocation(Object referent, long nativePtr) {
        CleanerThunk thunk = new CleanerThunk();
        Cleaner.create(referent, thunk);
        thunk.setNativePtr(nativePtr);
        return thunk;
    }

    private class CleanerThunk implements Runnable {
        private long nativePtr;

        void setNativePtr(long nativePtr) {
            this.nativePtr = nativePtr;
        }

        public void run() {
        }
    }
}
