package crunch

// LeakProfile lists the primitive fields that LeakCanary's Shark reads to
// decide whether an object has leaked, as class name and field name. With
// --profile leak their values are kept, and the names of these classes and
// fields stay in the clear (framework classes cannot be recovered from the
// app's own APK).
var LeakProfile = []struct{ Class, Field string }{
	{"android.app.Activity", "mDestroyed"},
	{"android.app.Activity", "mFinished"},
	{"android.app.Dialog", "mShowing"},
	{"android.app.Fragment", "mRemoving"},
	{"android.app.Fragment", "mDetached"},
	{"android.app.Fragment", "mCalled"},
	{"androidx.fragment.app.Fragment", "mRemoving"},
	{"androidx.fragment.app.Fragment", "mDetached"},
	{"androidx.fragment.app.Fragment", "mCalled"},
	{"androidx.fragment.app.Fragment", "mState"},
	{"android.support.v4.app.Fragment", "mCalled"},
	{"android.view.Window", "mDestroyed"},
	{"android.view.View", "mID"},
	{"android.view.View", "mWindowAttachCount"},
	{"android.view.View", "mPrivateFlags"},
	{"android.view.ViewRootImpl", "mAdded"},
	{"android.widget.Toast$TN", "mNextView"},
	{"android.os.Message", "what"},
	{"android.os.Message", "when"},
	{"android.os.Message", "arg1"},
	{"android.os.Message", "arg2"},
	{"android.os.MessageQueue", "mQuitting"},
	{"android.os.Looper", "mInLoop"},
	{"android.app.ActivityThread", "mSystemThread"},
	{"java.lang.Thread", "tid"},
	{"java.lang.Thread", "threadStatus"},
	{"leakcanary.KeyedWeakReference", "watchUptimeMillis"},
	{"leakcanary.KeyedWeakReference", "retainedUptimeMillis"},
	{"leakcanary.KeyedWeakReference", "heapDumpUptimeMillis"},
	{"com.squareup.leakcanary.KeyedWeakReference", "watchUptimeMillis"},
	{"com.squareup.leakcanary.KeyedWeakReference", "retainedUptimeMillis"},
}
