package org.eclipse.mat.hprof;

import org.eclipse.core.runtime.Plugin;

/**
 * Stand-in for MAT's bundle activator (plugins/org.eclipse.mat.hprof/src/org/eclipse/mat/hprof/
 * HprofPlugin.java). Outside OSGi no bundle is started, so there is no instance: getDefault() is
 * null, as it would be in MAT before activation. The parser reads it only behind
 * Platform.inDebugMode() (Pass1Parser, SeekableStream: the verbose switches), which is false
 * here (osgi.debug unset; see MatSummary.installBundleContext). MAT's getPreferenceStore() is left out: it needs org.eclipse.jface and org.eclipse.ui
 * (not in Debian) and only the preference pages use it, which build.sh leaves out too.
 */
public class HprofPlugin extends Plugin
{
    public static HprofPlugin getDefault()
    {
        return null;
    }
}
