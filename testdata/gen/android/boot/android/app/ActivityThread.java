package android.app;

import android.content.pm.ApplicationInfo;

/**
 * A stand-in for Android's android.app.ActivityThread, the app's main
 * thread's state, with the path by which LeakCanary's Shark reads the
 * app's process name for its metadata:
 * sCurrentActivityThread.mBoundApplication.appInfo.processName
 * (AndroidMetadataExtractor). Shark reads mServices only for an app's
 * android.app.Service instances, which the programs here have none of.
 */
public final class ActivityThread {
    private static ActivityThread sCurrentActivityThread;

    private AppBindData mBoundApplication;

    /** What the system gave the app as it started it. */
    static final class AppBindData {
        String processName;
        ApplicationInfo appInfo;
    }

    /** Binds the app of package packageName, in process processName, as the system does. */
    public static void bindApplication(String packageName, String processName) {
        ActivityThread thread = new ActivityThread();
        AppBindData data = new AppBindData();
        data.processName = processName;
        data.appInfo = new ApplicationInfo(packageName, processName);
        thread.mBoundApplication = data;
        sCurrentActivityThread = thread;
    }
}
