package android.content.pm;

/**
 * A stand-in for Android's android.content.pm.ApplicationInfo: the app's
 * package and the process it runs in.
 */
public class ApplicationInfo {
    public String packageName;
    public String processName;

    public ApplicationInfo(String packageName, String processName) {
        this.packageName = packageName;
        this.processName = processName;
    }
}
