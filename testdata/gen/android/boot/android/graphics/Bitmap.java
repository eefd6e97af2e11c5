package android.graphics;

import libcore.util.NativeAllocationRegistry;

/**
 * A stand-in for Android's android.graphics.Bitmap (API 26 and later),
 * whose pixels lie in native memory: each bitmap registers its pixels'
 * bytes with a NativeAllocationRegistry, which LeakCanary's Shark adds to
 * the retained size of the objects that hold the bitmap.
 */
public final class Bitmap {
    private static long nextNativePtr = 0x7a0000001000L;

    private final long mNativePtr;
    private final int mWidth;
    private final int mHeight;

    private Bitmap(long nativePtr, int width, int height) {
        mNativePtr = nativePtr;
        mWidth = width;
        mHeight = height;
        NativeAllocationRegistry registry = new NativeAllocationRegistry(Bitmap.class.getClassLoader(), 0x7b0000002000L, 4L * width * height);
        registry.registerNativeAllocation(this, nativePtr);
    }

    /** A bitmap of width x height ARGB_8888 pixels. */
    public static Bitmap createBitmap(int width, int height) {
        long ptr = nextNativePtr;
        nextNativePtr += 4L * width * height;
        return new Bitmap(ptr, width, height);
    }
}
