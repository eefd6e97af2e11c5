package crunch

// LeakProfile lists the primitive fields that LeakCanary's Shark (v2.14)
// reads, as class name and field name: the ones that decide whether an
// object is leaking or how its references are expanded, and the ones its
// labels and metadata show. With --profile leak their values are kept, and
// the names of these classes and fields stay in the clear (most are
// platform names anyway; LeakCanary's own and third-party classes come with
// the app). Fields of older Shark versions are kept too.
var LeakProfile = []struct{ Class, Field string }{
	// Leak status.
	{"android.app.Activity", "mDestroyed"},
	{"android.app.Activity", "mFinished"},
	{"android.view.View", "mWindowAttachCount"},
	{"android.os.MessageQueue", "mQuitting"},
	{"android.os.MessageQueue", "mQuiting"}, // before API 17
	{"android.view.Window", "mDestroyed"},
	{"leakcanary.KeyedWeakReference", "watchUptimeMillis"},
	{"leakcanary.KeyedWeakReference", "retainedUptimeMillis"},
	{"leakcanary.KeyedWeakReference", "heapDumpUptimeMillis"}, // a static
	{"com.squareup.leakcanary.KeyedWeakReference", "watchUptimeMillis"},
	{"com.squareup.leakcanary.KeyedWeakReference", "retainedUptimeMillis"},
	{"com.squareup.leakcanary.KeyedWeakReference", "heapDumpUptimeMillis"},
	{"mortar.MortarScope", "dead"},
	{"androidx.compose.runtime.CompositionImpl", "disposed"},
	// How many elements Shark follows as ArrayList[i] references.
	{"java.util.ArrayList", "size"},
	// Native sizes added to retained sizes (API 24+).
	{"libcore.util.NativeAllocationRegistry", "size"},
	// Labels and metadata.
	{"android.view.View", "mID"},
	{"android.view.WindowManager$LayoutParams", "type"},
	{"android.os.Message", "what"},
	{"android.os.Message", "when"},
	{"android.os.Message", "arg1"},
	{"android.os.Message", "arg2"},
	{"android.animation.ValueAnimator", "mInitialized"},
	{"android.animation.ValueAnimator", "mStarted"},
	{"android.animation.ValueAnimator", "mRunning"},
	{"android.animation.ValueAnimator", "mAnimationEndRequested"},
	{"android.animation.ValueAnimator", "mDuration"},
	{"android.animation.ValueAnimator", "mStartDelay"},
	{"android.animation.ValueAnimator", "mRepeatCount"},
	{"android.animation.ValueAnimator", "mRepeatMode"},
	{"android.util.DisplayMetrics", "widthPixels"},
	{"android.util.DisplayMetrics", "heightPixels"},
	{"android.graphics.Bitmap", "mWidth"},
	{"android.graphics.Bitmap", "mHeight"},
	{"com.squareup.coordinators.Coordinator", "attached"},
	// Read by earlier Shark versions.
	{"android.app.Dialog", "mShowing"},
	{"android.app.Fragment", "mRemoving"},
	{"android.app.Fragment", "mDetached"},
	{"android.app.Fragment", "mCalled"},
	{"androidx.fragment.app.Fragment", "mRemoving"},
	{"androidx.fragment.app.Fragment", "mDetached"},
	{"androidx.fragment.app.Fragment", "mCalled"},
	{"androidx.fragment.app.Fragment", "mState"},
	{"android.support.v4.app.Fragment", "mCalled"},
	{"android.view.View", "mPrivateFlags"},
	{"android.view.ViewRootImpl", "mAdded"},
	{"android.os.Looper", "mInLoop"},
	{"android.app.ActivityThread", "mSystemThread"},
	{"java.lang.Thread", "tid"},
	{"java.lang.Thread", "threadStatus"},
}

// LifecycleFlags lists the primitive instance fields of Android framework
// classes that say whether an object's life has ended: an Activity
// destroyed or finished, a Window destroyed, a MessageQueue quitting, a
// View attached to a window once (then detached, its attachment gone).
// LeakCanary's Shark (v2.14, AndroidObjectInspectors) decides by them
// which objects are leaking: a destroyed Activity held from a root is the
// leak it reports most, and Views, Windows and ViewRootImpls are leaking
// when their Activity is destroyed. They are the framework's state, not
// values the app or its user chooses (the most one tells is how many times
// a view was attached to a window). A default
// crunch keeps their values, in classes of the boot class loader only, as
// it keeps PlatformFacts (spec/bmd.md §7.3).
var LifecycleFlags = []struct{ Class, Field string }{
	{"android.app.Activity", "mDestroyed"},
	{"android.app.Activity", "mFinished"},
	{"android.view.Window", "mDestroyed"},
	{"android.os.MessageQueue", "mQuitting"},
	{"android.os.MessageQueue", "mQuiting"}, // before API 17
	{"android.view.View", "mWindowAttachCount"},
}

// PlatformSizes lists the primitive instance fields of platform classes
// that hold a size analyzers count, as they count the array lengths a BMD
// keeps: how many elements of a java.util.ArrayList are in use, which
// LeakCanary's Shark (v2.14, InternalSharedArrayListReferenceReader) reads
// to follow a list's elements as ArrayList[i] references in its leak
// traces, and whose leak signatures they make; and the native bytes of the
// allocations a libcore.util.NativeAllocationRegistry registers (Android 7
// and later: a Bitmap's pixels among them), which Shark
// (AndroidNativeSizeMapper) and Android Studio add to the retained size of
// the objects that own them. An ArrayList holds no element at or past its
// size, and the BMD keeps every reference of its array, null or not: its
// size tells no more than how many null elements end the list. A native
// size is of the kind of an array's length: a bitmap's is its pixels' bytes.
// A default crunch keeps their values, in classes of the boot class loader
// only, as it keeps PlatformFacts (spec/bmd.md §7.3).
var PlatformSizes = []struct{ Class, Field string }{
	{"java.util.ArrayList", "size"},
	{"libcore.util.NativeAllocationRegistry", "size"},
}

// LibraryLeakFlags lists the primitive fields of libraries that an app
// bundles by which LeakCanary's Shark (v2.14) decides whether an object is
// leaking: which of the objects LeakCanary watches it found retained, and
// when (leakcanary.KeyedWeakReference: KeyedWeakReferenceFinder and
// ObjectInspectors.KEYED_WEAK_REFERENCE take every watched object whose
// retainedUptimeMillis is not -1 as leaking), whether a Compose
// composition was disposed, whether a Mortar scope is dead
// (AndroidObjectInspectors). They are the libraries' state, times of the
// device's uptime and booleans, not values the app or its user chooses. A
// default crunch keeps their values in a class of that name whatever its
// class loader (the app's loader loads these libraries), the field declared
// by that class; unlike the platform facts', their names are hashed as the
// app's others are (spec/bmd.md §7.3). A class that a minified build
// renamed matches nothing: LeakCanary's own R8 rules keep
// KeyedWeakReference's names, Compose's do not keep CompositionImpl's.
var LibraryLeakFlags = []struct{ Class, Field string }{
	{"leakcanary.KeyedWeakReference", "watchUptimeMillis"},
	{"leakcanary.KeyedWeakReference", "retainedUptimeMillis"},
	{"leakcanary.KeyedWeakReference", "heapDumpUptimeMillis"}, // a static
	{"androidx.compose.runtime.CompositionImpl", "disposed"},
	{"mortar.MortarScope", "dead"},
}

// PlatformFacts lists the primitive static fields of platform classes that
// describe the runtime, not the user, and that analyzers read to infer the
// API level or the object layout. A default crunch keeps their values, in
// classes of the boot class loader only (spec/bmd.md §7.3).
var PlatformFacts = []struct{ Class, Field string }{
	// Shark's reference matchers and inspectors depend on the API level.
	{"android.os.Build$VERSION", "SDK_INT"},
	// VisualVM infers the reference size (compressed oops) of 8-byte-ID
	// dumps from these offsets.
	{"java.lang.Class$Atomic", "annotationDataOffset"},
	{"java.lang.Class$Atomic", "annotationTypeOffset"},
	// ... or, on older JDKs whose Class has no Atomic, from these.
	{"java.util.concurrent.FutureTask", "runnerOffset"},
	{"java.util.concurrent.FutureTask", "waitersOffset"},
}
