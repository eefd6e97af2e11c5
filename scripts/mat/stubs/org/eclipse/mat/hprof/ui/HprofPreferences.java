package org.eclipse.mat.hprof.ui;

/**
 * Stand-in for MAT's HPROF preferences (plugins/org.eclipse.mat.hprof/src/org/eclipse/mat/hprof/
 * ui/HprofPreferences.java), whose getters read Platform.getPreferencesService() with
 * HprofPlugin.getDefault().getBundle(): both need a running OSGi framework. This one answers
 * MAT's defaults (plugins/org.eclipse.mat.hprof/preferences.ini: hprofStrictness=
 * hprofStrictnessStop, hprofAddClassRefs=false, methodsAsClasses=none), and like MAT lets
 * -DhprofStrictnessWarning=true or -DhprofStrictnessPermissive=true override the strictness.
 * The names are MAT's, so the parser compiles against it unchanged.
 */
public class HprofPreferences
{
    public static final String STRICTNESS_PREF = "hprofStrictness";
    public static final HprofStrictness DEFAULT_STRICTNESS = HprofStrictness.STRICTNESS_STOP;
    public static final String ADDITIONAL_CLASS_REFERENCES = "hprofAddClassRefs";
    public static final String P_METHODS = "methodsAsClasses";
    public static final String NO_METHODS_AS_CLASSES = "none";
    public static final String RUNNING_METHODS_AS_CLASSES = "running";
    public static final String FRAMES_ONLY = "frames";

    public static HprofStrictness getCurrentStrictness()
    {
        for (HprofStrictness s : HprofStrictness.values())
            if (Boolean.getBoolean(s.toString()))
                return s;
        return DEFAULT_STRICTNESS;
    }

    public enum HprofStrictness
    {
        STRICTNESS_STOP("hprofStrictnessStop"),
        STRICTNESS_WARNING("hprofStrictnessWarning"),
        STRICTNESS_PERMISSIVE("hprofStrictnessPermissive");

        private final String key;

        HprofStrictness(String key)
        {
            this.key = key;
        }

        @Override
        public String toString()
        {
            return key;
        }

        public static HprofStrictness parse(String value)
        {
            for (HprofStrictness s : values())
                if (s.key.equals(value))
                    return s;
            return DEFAULT_STRICTNESS;
        }
    }

    public static boolean useAdditionalClassReferences()
    {
        return false;
    }

    public static String methodsAsClasses()
    {
        return NO_METHODS_AS_CLASSES;
    }
}
