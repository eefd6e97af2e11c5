#!/usr/bin/env bash
# Build Android Studio's HPROF parser (perflib) and PerflibSummary.java with javac.
#
#   scripts/perflib/build.sh SRC OUT
#
# SRC holds perflib's sources from a clone of github.com/Flank/mirror-goog-studio-main (a
# mirror of Android Studio's studio-main) at 5551ae4427e76d260065fa7b06b955cf1c65c704
# (2022-02-19, the last commit before perflib's heap classes moved to Kotlin 1.5, which
# Debian's kotlin 1.3 cannot build; HprofParser.java is the same at the mirror's head):
#
#   git -C CLONE archive 5551ae4427e76d260065fa7b06b955cf1c65c704 perflib/src/main \
#     common/src/main/java/com/android/tools/proguard \
#     ddmlib/src/main/java/com/android/ddmlib/ByteBufferUtil.java | tar -x -C SRC
#
# OUT gets the classes and classpath.txt, the class path that summary.sh runs with.
#
# Debian packages: libguava-java, libtrove-intellij-java (JetBrains' trove4j fork, which
# Android Studio ships: perflib's LinkEvalDominators needs its TObjectHashingStrategy.IDENTITY,
# which plain libtrove-java 2.1.0 lacks; libtrove3-java renamed the packages) and
# libandroid-tools-annotations-java (com.android.annotations).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$1" && pwd)"
mkdir -p "$2"; out="$(cd "$2" && pwd)"
for jar in guava libtrove-intellij com.android.tools.annotations; do
  if [[ ! -f /usr/share/java/$jar.jar ]]; then
    apt-get install -y -qq libguava-java libtrove-intellij-java libandroid-tools-annotations-java >/dev/null
    break
  fi
done
cp=/usr/share/java/guava.jar:/usr/share/java/libtrove-intellij.jar:/usr/share/java/com.android.tools.annotations.jar
p="$src/perflib/src/main/java/com/android/tools/perflib"
rm -rf "$out/classes" && mkdir "$out/classes"
{
  # The heap parser only: not vmtrace, viz, memoryanalyzer or the HPROF writer.
  ls "$p"/captures/*.java "$p"/analyzer/Capture.java
  ls "$p"/heap/*.java "$p"/heap/analysis/*.java "$p"/heap/ext/*.java "$p"/heap/io/*.java
  echo "$src/common/src/main/java/com/android/tools/proguard/ProguardMap.java"
  echo "$src/ddmlib/src/main/java/com/android/ddmlib/ByteBufferUtil.java"
  echo "$here/stubs/com/android/ddmlib/Log.java"
  echo "$here/PerflibSummary.java"
} > "$out/sources.txt"
javac -nowarn -encoding UTF-8 -d "$out/classes" -cp "$cp" @"$out/sources.txt"
echo "$cp:$out/classes" > "$out/classpath.txt"
echo "perflib: built in $out"
