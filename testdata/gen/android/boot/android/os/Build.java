package android.os;

/**
 * A stand-in for Android's android.os.Build, loaded by the boot class loader
 * (-Xbootclasspath/a) as the framework's is on a phone: LeakCanary's Shark
 * runs its Android analysis on a dump that has this class and
 * Build$VERSION, and reads MANUFACTURER, ID and VERSION.SDK_INT. The API
 * level is 33 unless the system property standin.sdk gives another, set
 * before Build$VERSION is initialized.
 */
public class Build {
    public static final String MANUFACTURER = new String("samsung");
    public static final String ID = new String("TP1A.220624.014");

    /** Build.VERSION: the API level. */
    public static class VERSION {
        public static final int SDK_INT = Integer.parseInt(System.getProperty("standin.sdk", "33"));
    }
}
