#!/usr/bin/env bash
# Regenerate the committed test dumps in testdata/ (see testdata/README.md).
#
#   scripts/gentestdata.sh          Sample, Secrets, LibUser, HugeArray, FragmentLeak, ActivityLeak,
#                                   Sample with ZGC and Shenandoah (64-bit JVM, 8-byte IDs)
#   WITH_ID32=1 scripts/gentestdata.sh   also sample32.hprof.gz (needs scripts/install-jdk32.sh)
#   WITH_PROGUARD=1 scripts/gentestdata.sh   also obfuscated/* (needs proguard: apt-get install proguard)
#   WITH_JDK25=1 scripts/gentestdata.sh      also sample-jdk25.hprof.gz (needs a JDK 25 in $JDK25_HOME,
#                                   default /usr/lib/jvm/temurin-25-jdk-amd64)
#
# Each .hprof is gzip -9 -n compressed (no name or time stamp in the gzip header) and must
# stay under 2 MB.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TD=$ROOT/testdata
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gentestdata.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
LIMIT=$((2 * 1024 * 1024))

pack() { # pack RAW.hprof DEST.hprof.gz
    gzip -9 -n -c "$1" >"$2.tmp"
    local sz
    sz=$(stat -c %s "$2.tmp")
    if ((sz >= LIMIT)); then
        rm -f "$2.tmp"
        echo "gentestdata: $2 would be $sz bytes (limit $LIMIT): make the program allocate less" >&2
        exit 1
    fi
    mv "$2.tmp" "$2"
    echo "gentestdata: $2: $(stat -c %s "$1") bytes raw, $sz bytes gzipped" >&2
}

"$ROOT/scripts/gendump.sh" Sample "$TMP/sample.hprof"
pack "$TMP/sample.hprof" "$TD/sample.hprof.gz"

"$ROOT/scripts/gendump.sh" Secrets "$TMP/secrets.hprof"
pack "$TMP/secrets.hprof" "$TD/secrets.hprof.gz"

LIBUSER_OUT=$TMP/libuser "$ROOT/scripts/gendump.sh" LibUser "$TMP/libuser.hprof"
mkdir -p "$TD/libuser"
pack "$TMP/libuser.hprof" "$TD/libuser/libuser.hprof.gz"
cp "$TMP/libuser/lib.jar" "$TMP/libuser/libuser-app.jar" "$TD/libuser/"

# One Object[200_000], longer than the 65,536 elements crunch and decrunch
# convert at a time: the analyzer round trip (scripts/roundtrip.sh) of an
# array in pieces.
"$ROOT/scripts/gendump.sh" HugeArray "$TMP/hugearray.hprof" 200000
pack "$TMP/hugearray.hprof" "$TD/hugearray.hprof.gz"

# An app that leaks an androidx Fragment, on stand-ins for android.os.Build
# (boot class path) and androidx (the app's jar): Shark's Android analysis
# finds the leak by the name of the fragment's lifecycle state.
APP_OUT=$TMP/fragment "$ROOT/scripts/gendump.sh" FragmentLeak "$TMP/fragment/fragmentleak.hprof"
mkdir -p "$TD/fragment"
pack "$TMP/fragment/fragmentleak.hprof" "$TD/fragment/fragmentleak.hprof.gz"
cp "$TMP/fragment/fragmentleak-app.jar" "$TD/fragment/"

# An app that leaks an Activity, and another through the input method
# manager (Samsung's library leak on Android 9 to 11), on stand-ins for
# android.app.Activity, android.os.Build and InputMethodManager (boot
# class path): Shark's Android analysis finds the leaks by the
# activities' mDestroyed, a lifecycle flag crunch keeps, and tells
# Samsung's by Build.MANUFACTURER, which decrunch writes back from a label.
APP_OUT=$TMP/activity "$ROOT/scripts/gendump.sh" ActivityLeak "$TMP/activity/activityleak.hprof"
mkdir -p "$TD/activity"
pack "$TMP/activity/activityleak.hprof" "$TD/activity/activityleak.hprof.gz"
cp "$TMP/activity/activityleak-app.jar" "$TD/activity/"

# A debug build's app with LeakCanary and Compose: a destroyed activity
# held by its disposed composition, and objects LeakCanary watches, found
# retained or not yet, on stand-ins for LeakCanary's KeyedWeakReference and
# Compose's CompositionImpl (the app's jar): Shark decides what leaks by
# their primitive fields, which crunch keeps by default
# (crunch.LibraryLeakFlags), follows a list's elements by ArrayList.size
# and adds a Bitmap's native bytes by NativeAllocationRegistry.size
# (crunch.PlatformSizes), and prints the process name, which decrunch
# writes back from a label.
APP_OUT=$TMP/watched "$ROOT/scripts/gendump.sh" WatchedLeak "$TMP/watched/watchedleak.hprof"
mkdir -p "$TD/watched"
pack "$TMP/watched/watchedleak.hprof" "$TD/watched/watchedleak.hprof.gz"
cp "$TMP/watched/watchedleak-app.jar" "$TD/watched/"

# The collectors whose dumps list objects in heap-walk order, not by
# address.
GC=ZGC "$ROOT/scripts/gendump.sh" Sample "$TMP/zgc.hprof"
pack "$TMP/zgc.hprof" "$TD/sample-zgc.hprof.gz"
GC=ShenandoahGC "$ROOT/scripts/gendump.sh" Sample "$TMP/shenandoah.hprof"
pack "$TMP/shenandoah.hprof" "$TD/sample-shenandoah.hprof.gz"

if [[ "${WITH_ID32:-0}" == 1 ]]; then
    ID32=1 "$ROOT/scripts/gendump.sh" Sample "$TMP/sample32.hprof"
    pack "$TMP/sample32.hprof" "$TD/sample32.hprof.gz"
fi

# Sample on JDK 25 with its default collector (G1), dumped by two dumper
# threads (GC.heap_dump -parallel=2, JDK 21 on), whose segments jcmd
# merges. Its heap holds an Object[] of the CDS archive's roots whose
# elements name objects the dump leaves out (946 of 2,711 at its making).
if [[ "${WITH_JDK25:-0}" == 1 ]]; then
    JAVA_HOME=${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64} GC=G1GC DUMP_OPTS=-parallel=2 \
        "$ROOT/scripts/gendump.sh" Sample "$TMP/jdk25.hprof"
    pack "$TMP/jdk25.hprof" "$TD/sample-jdk25.hprof.gz"
fi

if [[ "${WITH_PROGUARD:-0}" == 1 ]]; then
    PROGUARD=1 LIBUSER_OUT=$TMP/obf "$ROOT/scripts/gendump.sh" LibUser "$TMP/obf/obfuscated.hprof"
    mkdir -p "$TD/obfuscated"
    pack "$TMP/obf/obfuscated.hprof" "$TD/obfuscated/obfuscated.hprof.gz"
    cp "$TMP/obf/obfuscated.jar" "$TMP/obf/mapping.txt" "$TD/obfuscated/"
fi
