#!/usr/bin/env bash
# Make a real HotSpot HPROF heap dump from one of the programs in testdata/gen/.
#
#   scripts/gendump.sh PROGRAM OUT.hprof [program args...]
#
# PROGRAM is the base name of testdata/gen/PROGRAM.java (Sample, Secrets, LibUser, Big, HugeArray,
# ManyClasses, Oom, FragmentLeak, ActivityLeak). Oom is not dumped by jcmd: it runs out of memory, and the JVM writes
# the dump itself (-XX:+HeapDumpOnOutOfMemoryError; XMX sets its heap, default 96m).
# The program is compiled into a temporary directory under $GENDUMP_TMP (default
# ${TMPDIR:-/tmp}), run until it prints READY, dumped with
#   jcmd <pid> GC.heap_dump OUT.hprof
# and killed. Exits non-zero on any failure; OUT.hprof is then removed.
#
# Live objects only (the default): GC.heap_dump without -all first runs a full GC and writes
# only reachable objects, so the dump depends only on what the program keeps, not on when
# the last collection happened: the test dumps are as reproducible as a JVM allows.
# DUMP_ALL=1 passes -all (JDK 17 supports it) to also dump unreachable objects.
#
# Environment:
#   JAVA_HOME      JDK whose javac, jar, java and jcmd are used (default: the ones on PATH)
#   ID32=1         run the program on the 32-bit JVM installed by scripts/install-jdk32.sh
#                  (in $JDK32_ROOT, default /opt/heapcrunch-jdk32): the dump has 4-byte IDs
#   JDK32_ROOT     where install-jdk32.sh put the 32-bit JVM
#   DUMP_ALL=1     also dump unreachable objects (jcmd GC.heap_dump -all)
#   DUMP_OPTS      more options of GC.heap_dump, e.g. "-parallel=2 -gz=1" (JDK 21 on:
#                  several dumper threads, their segments merged; a gzipped dump)
#   XMX            override the -Xmx chosen for the program (e.g. XMX=4g)
#   GC             the collector (default ParallelGC for Big, the JVM's own for Oom,
#                  SerialGC for the others; G1GC, the JDK's default, spreads the heap's
#                  objects over the whole -Xmx; ZGC and ShenandoahGC dump objects in
#                  the order their heap walk meets them, not by address)
#   JAVA_OPTS      extra JVM options for the program (with Oom on JDK 21 and later,
#                  -XX:ActiveProcessorCount=8 has the JVM write its dump with two
#                  threads on a 2-core machine, where it counts the cores and uses one)
#   LIBUSER_OUT    LibUser only: directory that receives lib.jar (the library, built from
#                  testdata/gen/lib), libuser-app.jar (the program's own classes) and
#                  classes/ (the same classes unpacked). Default: the directory of OUT.hprof.
#   APP_OUT        FragmentLeak, ActivityLeak and WatchedLeak only: directory that
#                  receives fragmentleak-app.jar, activityleak-app.jar or
#                  watchedleak-app.jar (the stand-ins of the libraries an app bundles,
#                  testdata/gen/android/app: androidx's Fragment and Lifecycle, Compose's
#                  CompositionImpl, LeakCanary's KeyedWeakReference and ObjectWatcher;
#                  and the program: what the app's APK holds). Default: the directory of
#                  OUT.hprof. The stand-ins of the framework (android.os.Build,
#                  android.app.Activity: testdata/gen/android/boot) run on the boot
#                  class path (-Xbootclasspath/a), as a phone's framework does, and
#                  libcore's sun.misc.Cleaner (testdata/gen/android/jdk.unsupported) in
#                  the JDK's jdk.unsupported module (--patch-module, which turns off the
#                  JVM's class data sharing archive).
#   PROGUARD=1     LibUser only: obfuscate the program and its library with ProGuard
#                  (Debian: apt-get install proguard) and dump the obfuscated program, as
#                  an app's release build runs. LIBUSER_OUT then also receives
#                  obfuscated.jar (the classes as run) and mapping.txt (ProGuard's
#                  -printmapping). Debian's ProGuard 6.2.2 reads class files up to Java 13:
#                  the program is compiled with --release 11, and its library classes are
#                  the Java 11 API from the JDK's lib/ct.sym, their class version set to 55.
#   READY_TIMEOUT  seconds to wait for READY (default 900)
#   DUMP_TIMEOUT   seconds to wait for jcmd (default 1800)
set -euo pipefail

die() { echo "gendump: $*" >&2; exit 1; }

[[ $# -ge 2 ]] || die "usage: $0 PROGRAM OUT.hprof [args...]"
PROGRAM=$1
OUT=$2
shift 2

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GEN=$ROOT/testdata/gen
SRC=$GEN/$PROGRAM.java
[[ -f "$SRC" ]] || die "no such program: $SRC"

bin() { if [[ -n "${JAVA_HOME:-}" ]]; then echo "$JAVA_HOME/bin/$1"; else command -v "$1" || die "$1 not found (install a JDK 17 or set JAVA_HOME)"; fi; }
JAVAC=$(bin javac)
JAR=$(bin jar)
JCMD=$(bin jcmd)
JAVA=$(bin java)
if [[ "${ID32:-0}" == 1 ]]; then
    JAVA=${JDK32_ROOT:-/opt/heapcrunch-jdk32}/java32
    [[ -x "$JAVA" ]] || die "32-bit JVM not found at $JAVA: run scripts/install-jdk32.sh first"
fi

OUTDIR=$(mkdir -p "$(dirname "$OUT")" && cd "$(dirname "$OUT")" && pwd)
OUT_ABS=$OUTDIR/$(basename "$OUT")

WORK=$(mktemp -d "${GENDUMP_TMP:-${TMPDIR:-/tmp}}/gendump-$PROGRAM.XXXXXX")
PID=
OK=0
cleanup() {
    if [[ -n "$PID" ]] && kill -0 "$PID" 2>/dev/null; then
        kill "$PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$PID" 2>/dev/null || true
    fi
    [[ -n "$PID" ]] && wait "$PID" 2>/dev/null || true
    if [[ $OK != 1 ]]; then
        rm -f "$OUT_ABS"
        for s in stdout stderr; do
            if [[ -s "$WORK/$s" ]]; then echo "gendump: program $s:" >&2; tail -20 "$WORK/$s" >&2; fi
        done
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# proguard_libuser obfuscates libuser-app.jar and lib.jar in $LIBOUT into obfuscated.jar,
# with its mapping.txt, keeping only LibUser.main's name (ProGuard's defaults otherwise:
# shrinking, optimization, obfuscation, as in an app's release build).
proguard_libuser() {
    local home d m
    home=$(dirname "$(dirname "$(readlink -f "$JAVAC")")")
    mkdir -p "$WORK/ct" "$WORK/api11"
    (cd "$WORK/ct" && unzip -q "$home/lib/ct.sym")
    # ct.sym keeps a class in the folder of the releases it is the same in, named by
    # their digits (7, 8, 9, A for 10, B for 11 ...): the Java 11 API is every folder
    # whose name has a B, each holding module folders, a class in one of them only.
    for d in "$WORK"/ct/*B*/; do
        for m in "$d"*/; do
            cp -r "$m". "$WORK/api11/"
        done
    done
    find "$WORK/api11" -name module-info.sig -delete
    # Each X.sig becomes X.class, its class version (bytes 6 and 7) 55, Java 11,
    # where the stubs say 61.
    find "$WORK/api11" -name '*.sig' -exec perl -e '
        for my $f (@ARGV) {
            open(my $in, "<:raw", $f) or die "$f: $!";
            my $b = do { local $/; <$in> };
            close $in;
            substr($b, 6, 2) = "\x00\x37";
            (my $c = $f) =~ s/\.sig$/.class/;
            open(my $out, ">:raw", $c) or die "$c: $!";
            print $out $b;
            close $out or die "$c: $!";
            unlink $f;
        }' {} +
    "$JAR" --create --file "$WORK/api11.jar" -C "$WORK/api11" .
    rm -f "$LIBOUT/obfuscated.jar" "$LIBOUT/mapping.txt"
    cat >"$WORK/proguard.conf" <<EOF
-injars $LIBOUT/libuser-app.jar
-injars $LIBOUT/lib.jar(!META-INF/**)
-outjars $LIBOUT/obfuscated.jar
-libraryjars $WORK/api11.jar
-printmapping $LIBOUT/mapping.txt
-keep public class LibUser { public static void main(java.lang.String[]); }
-dontwarn
EOF
    proguard @"$WORK/proguard.conf" >"$WORK/proguard.out" 2>&1 || { cat "$WORK/proguard.out" >&2; die "proguard failed"; }
    [[ -s "$LIBOUT/mapping.txt" ]] || die "proguard wrote no mapping"
}

# ---- compile ----
JAVAC_OPTS=(-encoding UTF-8 --release 17 -nowarn)
if [[ "${PROGUARD:-0}" == 1 ]]; then
    [[ "$PROGRAM" == LibUser ]] || die "PROGUARD=1 is for LibUser only"
    command -v proguard >/dev/null || die "proguard not found (Debian: apt-get install proguard)"
    JAVAC_OPTS=(-encoding UTF-8 --release 11 -nowarn)
fi
CP=$WORK/classes
mkdir -p "$CP"
if [[ "$PROGRAM" == LibUser ]]; then
    # No invokedynamic string concatenation: it would spin hidden classes whose names
    # cannot be recovered from any jar.
    JAVAC_OPTS+=(-XDstringConcat=inline)
    LIBOUT=${LIBUSER_OUT:-$OUTDIR}
    mkdir -p "$LIBOUT"
    LIBOUT=$(cd "$LIBOUT" && pwd)
    mkdir -p "$WORK/lib-classes"
    "$JAVAC" "${JAVAC_OPTS[@]}" -d "$WORK/lib-classes" $(find "$GEN/lib" -name '*.java' | sort)
    rm -f "$LIBOUT/lib.jar"
    "$JAR" --create --file "$LIBOUT/lib.jar" -C "$WORK/lib-classes" .
    "$JAVAC" "${JAVAC_OPTS[@]}" -cp "$LIBOUT/lib.jar" -d "$CP" "$SRC"
    rm -f "$LIBOUT/libuser-app.jar"
    "$JAR" --create --file "$LIBOUT/libuser-app.jar" -C "$CP" .
    rm -rf "$LIBOUT/classes"
    cp -r "$CP" "$LIBOUT/classes"
    CP=$CP:$LIBOUT/lib.jar
    if [[ "${PROGUARD:-0}" == 1 ]]; then
        proguard_libuser
        CP=$LIBOUT/obfuscated.jar
    fi
elif [[ "$PROGRAM" == FragmentLeak || "$PROGRAM" == ActivityLeak || "$PROGRAM" == WatchedLeak ]]; then
    # The Android framework's stand-ins (android.os.Build, android.app.Activity)
    # on the boot class path, as a phone's framework is; the libraries' an app
    # bundles (androidx, Compose, LeakCanary: android/app) and the program in
    # the app's jar, as an APK holds them.
    JAVAC_OPTS+=(-XDstringConcat=inline)
    APPOUT=${APP_OUT:-$OUTDIR}
    APPJAR=$(echo "$PROGRAM" | tr '[:upper:]' '[:lower:]')-app.jar
    mkdir -p "$APPOUT" "$WORK/boot" "$WORK/unsupported"
    APPOUT=$(cd "$APPOUT" && pwd)
    # libcore's sun.misc.Cleaner, which the JDK does not have, joins the JDK's
    # jdk.unsupported module (a boot module, whose package sun.misc it is).
    # javac refuses --patch-module with --release: those two are compiled for
    # the JDK that runs them.
    PATCH=(--patch-module "jdk.unsupported=$WORK/unsupported")
    BOOT_OPTS=(-encoding UTF-8 -nowarn -XDstringConcat=inline)
    "$JAVAC" "${BOOT_OPTS[@]}" --patch-module "jdk.unsupported=$GEN/android/jdk.unsupported" -d "$WORK/unsupported" $(find "$GEN/android/jdk.unsupported" -name '*.java' | sort)
    "$JAVAC" "${BOOT_OPTS[@]}" "${PATCH[@]}" -d "$WORK/boot" $(find "$GEN/android/boot" -name '*.java' | sort)
    "$JAVAC" "${JAVAC_OPTS[@]}" -cp "$WORK/boot" -d "$CP" $(find "$GEN/android/app" -name '*.java' | sort) "$SRC"
    rm -f "$APPOUT/$APPJAR"
    "$JAR" --create --file "$APPOUT/$APPJAR" -C "$CP" .
    JAVA_OPTS="${PATCH[*]} -Xbootclasspath/a:$WORK/boot ${JAVA_OPTS:-}"
else
    "$JAVAC" "${JAVAC_OPTS[@]}" -d "$CP" "$SRC"
fi
PKG=$(sed -n 's/^[[:space:]]*package[[:space:]]\{1,\}\([A-Za-z0-9_.]*\)[[:space:]]*;.*/\1/p' "$SRC" | head -1)
MAIN=${PKG:+$PKG.}$PROGRAM

# ---- run ----
if [[ "$PROGRAM" == Oom ]]; then
    # The JVM writes the dump itself as it runs out of memory.
    rm -f "$OUT_ABS"
    # shellcheck disable=SC2206
    JVM_OPTS=(-Xmx${XMX:-96m} ${GC:+-XX:+Use$GC} -XX:+HeapDumpOnOutOfMemoryError "-XX:HeapDumpPath=$OUT_ABS" ${JAVA_OPTS:-})
    echo "gendump: running $MAIN (${JVM_OPTS[*]}) until it runs out of memory" >&2
    t0=$SECONDS
    "$JAVA" "${JVM_OPTS[@]}" -cp "$CP" "$MAIN" >"$WORK/stdout" 2>"$WORK/stderr" </dev/null && die "$MAIN did not run out of memory"
    grep -q 'Heap dump file created' "$WORK/stdout" "$WORK/stderr" || { cat "$WORK/stdout" "$WORK/stderr" >&2; die "the JVM did not write the dump"; }
    [[ "$(head -c 18 "$OUT_ABS")" == "JAVA PROFILE 1.0.2" ]] || die "$OUT_ABS does not start with 'JAVA PROFILE 1.0.2'"
    chmod 644 "$OUT_ABS"
    OK=1
    echo "gendump: wrote $OUT_ABS ($(stat -c %s "$OUT_ABS") bytes, run and dumped in $((SECONDS - t0)) s)" >&2
    exit 0
fi
if [[ "$PROGRAM" == Big ]]; then
    SIZE_MB=${1:-200}
    [[ "$SIZE_MB" =~ ^[0-9]+$ ]] || die "Big: size must be a number of MB, got '$SIZE_MB'"
    # live heap is about 0.7x the dump size; leave room so building does not thrash the GC
    JVM_OPTS=(-Xmx${XMX:-$((SIZE_MB * 3 / 2 + 512))m} -Xms${XMX:-$((SIZE_MB + 256))m} -XX:+Use${GC:-ParallelGC})
else
    JVM_OPTS=(-Xmx${XMX:-64m} -XX:+Use${GC:-SerialGC})
fi
# shellcheck disable=SC2206
JVM_OPTS+=(-XX:TieredStopAtLevel=1 ${JAVA_OPTS:-})

echo "gendump: running $MAIN (${JVM_OPTS[*]}) $*" >&2
"$JAVA" "${JVM_OPTS[@]}" -cp "$CP" "$MAIN" "$@" >"$WORK/stdout" 2>"$WORK/stderr" </dev/null &
PID=$!

deadline=$((SECONDS + ${READY_TIMEOUT:-900}))
until grep -q '^READY' "$WORK/stdout" 2>/dev/null; do
    kill -0 "$PID" 2>/dev/null || die "$MAIN exited before printing READY"
    ((SECONDS < deadline)) || die "timed out waiting for READY from $MAIN"
    sleep 0.2
done
[[ -s "$WORK/stderr" ]] && cat "$WORK/stderr" >&2

# ---- dump ----
rm -f "$OUT_ABS"
DUMP_ARGS=()
[[ "${DUMP_ALL:-0}" == 1 ]] && DUMP_ARGS+=(-all)
# shellcheck disable=SC2206
DUMP_ARGS+=(${DUMP_OPTS:-})
t0=$SECONDS
if ! timeout "${DUMP_TIMEOUT:-1800}" "$JCMD" "$PID" GC.heap_dump "${DUMP_ARGS[@]}" "$OUT_ABS" >"$WORK/jcmd.out" 2>&1; then
    cat "$WORK/jcmd.out" >&2
    die "jcmd GC.heap_dump failed"
fi
grep -q 'Heap dump file created' "$WORK/jcmd.out" || { cat "$WORK/jcmd.out" >&2; die "jcmd did not create the dump"; }
[[ "$( (gzip -dc 2>/dev/null || true) <"$OUT_ABS" | head -c 18)" == "JAVA PROFILE 1.0.2" || "$(head -c 18 "$OUT_ABS")" == "JAVA PROFILE 1.0.2" ]] ||
    die "$OUT_ABS does not start with 'JAVA PROFILE 1.0.2' (nor does it gunzipped)"
chmod 644 "$OUT_ABS"
OK=1
echo "gendump: wrote $OUT_ABS ($(stat -c %s "$OUT_ABS") bytes, dumped in $((SECONDS - t0)) s)" >&2
