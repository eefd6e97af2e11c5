#!/usr/bin/env bash
# Build Eclipse Memory Analyzer's HPROF parser (MAT) and MatSummary.java (with MatParse.java, its
# half in MAT's package) with javac, to run headless outside OSGi.
#
#   scripts/mat/build.sh SRC OUT
#
# SRC holds four of MAT's plug-ins from github.com/eclipse-mat/mat at
# 26cff26cb34a6cfdb48ec586bd3e7a4740f7435e (2026-07-01, "Merge pull request #191"; MAT 1.17.0):
#
#   git -C CLONE archive 26cff26cb34a6cfdb48ec586bd3e7a4740f7435e plugins/org.eclipse.mat.report \
#     plugins/org.eclipse.mat.api plugins/org.eclipse.mat.parser plugins/org.eclipse.mat.hprof \
#     | tar -x -C SRC
#
# report (collections, progress, messages), api (ISnapshot and the object model), parser (index
# files, SnapshotImpl, GarbageCleaner, DominatorTree), hprof (HprofIndexBuilder, Pass1Parser,
# Pass2Parser, HprofHeapObjectReader). OUT gets the classes (with the plug-ins' *.properties,
# which NLS loads the messages from) and classpath.txt, the class path that summary.sh runs with.
#
# Debian packages: libeclipse-core-runtime-java (Platform, Plugin), libequinox-common-java
# (IProgressMonitor, IStatus...), libequinox-registry-java (IConfigurationElement),
# libequinox-preferences-java, libeclipse-osgi-java (NLS, org.osgi.framework), libequinox-app-java
# (IApplication, for api's ParseSnapshotApp),
# libeclipse-core-contenttype-java (the content describers), libeclipse-core-jobs-java,
# libeclipse-core-resources-java, libeclipse-core-commands-java, libosgi-compendium-java
# (org.osgi.service.prefs, for hprof's JMapHeapDumpProvider) and libfindbugs-annotations-java
# (@CheckForNull in api's ThreadInfoImpl). Most are only needed to compile: the parse itself
# runs without an OSGi framework.
#
# Left out: hprof's ui/HPROFPreferencePage.java and ui/PreferenceInitializer.java (the preference
# page of MAT's GUI: org.eclipse.ui, jface, swt; nothing in the parser uses them). Replaced by
# stubs (in stubs/, each says why): hprof's HprofPlugin (its getPreferenceStore needs jface/ui)
# and ui/HprofPreferences (reads the OSGi preferences service; the stub answers MAT's defaults
# from preferences.ini). Everything else is MAT's own code: MatSummary gives it an extension
# registry made from the plug-ins' plugin.xml (build.sh copies them next to the classes) and the
# little of OSGi it asks for (see MatSummary.installBundleContext, installExtensionRegistry).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$1" && pwd)"
mkdir -p "$2"; out="$(cd "$2" && pwd)"
jars=(eclipse-core-runtime equinox-common equinox-registry equinox-preferences eclipse-osgi equinox-app
  eclipse-core-contenttype eclipse-core-jobs eclipse-core-resources eclipse-core-commands
  osgi.cmpn findbugs-annotations)
for jar in "${jars[@]}"; do
  if [[ ! -f /usr/share/java/$jar.jar ]]; then
    apt-get install -y -qq libeclipse-core-runtime-java libequinox-common-java \
      libequinox-registry-java libequinox-preferences-java libeclipse-osgi-java libequinox-app-java \
      libeclipse-core-contenttype-java libeclipse-core-jobs-java libeclipse-core-resources-java \
      libeclipse-core-commands-java libosgi-compendium-java libfindbugs-annotations-java >/dev/null
    break
  fi
done
cp=$(printf '/usr/share/java/%s.jar:' "${jars[@]}"); cp=${cp%:}
p="$src/plugins"
for d in report api parser hprof; do
  [[ -d "$p/org.eclipse.mat.$d/src" ]] || { echo "build.sh: no $p/org.eclipse.mat.$d/src" >&2; exit 1; }
done
rm -rf "$out/classes" && mkdir "$out/classes"
{
  find "$p"/org.eclipse.mat.{report,api,parser,hprof}/src -name '*.java' |
    grep -v -e '/org/eclipse/mat/hprof/ui/HPROFPreferencePage\.java$' \
      -e '/org/eclipse/mat/hprof/ui/PreferenceInitializer\.java$' \
      -e '/org/eclipse/mat/hprof/ui/HprofPreferences\.java$' \
      -e '/org/eclipse/mat/hprof/HprofPlugin\.java$' | sort
  find "$here/stubs" -name '*.java' | sort
  echo "$here/MatParse.java"
  echo "$here/MatSummary.java"
} > "$out/sources.txt"
if ! javac -nowarn -encoding UTF-8 -d "$out/classes" -cp "$cp" @"$out/sources.txt" 2> "$out/javac.log"; then
  cat "$out/javac.log" >&2; exit 1
fi
# messages.properties and annotations.properties, next to their classes
for d in report api parser hprof; do
  (cd "$p/org.eclipse.mat.$d/src" && find . -name '*.properties' -exec cp --parents {} "$out/classes/" \;)
done
# each plug-in's plugin.xml, for the extension registry MatSummary makes (no OSGi to read them)
mkdir -p "$out/classes/META-INF/mat-plugins"
for d in report api parser hprof; do
  cp "$p/org.eclipse.mat.$d/plugin.xml" "$out/classes/META-INF/mat-plugins/org.eclipse.mat.$d.xml"
done
echo "$cp:$out/classes" > "$out/classpath.txt"
echo "mat: built in $out"
