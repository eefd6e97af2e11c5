#!/usr/bin/env bash
# Speed and memory of crunch and decrunch side by side with the ORIGINAL 2014
# Java tools (Badoo's hprof-tools), in the same run, on the same dump:
#
#   scripts/vsoriginal.sh CLASSES_DIR DUMP.hprof
#
# CLASSES_DIR holds the original tools' compiled classes (how they were built:
# scripts/v1interop.sh). DUMP must have 4-byte identifiers (the original
# cruncher refuses others): the README's figures are on a dump of a 32-bit JVM,
#   scripts/install-jdk32.sh && ID32=1 scripts/gendump.sh Big big134.hprof 134
# (a generated one, with no JVM, also does:
#   go run ./internal/cmd/genhprof -o gen134.hprof -size 134M -idsize 4 -maxarray 64KiB)
# The original cruncher's main() writes to an unbuffered FileOutputStream (a
# system call per field: most of its time); it is run here through a
# four-line wrapper that buffers the output, its best case. The original
# decruncher buffers its own streams. Each original tool runs ORIG_RUNS
# times (default 1), each of ours RUNS times (default 3); the best wall time
# of each is printed, and with ORIG_RUNS over 1 also the median and the
# range, and the ratios of the medians beside those of the best runs (the
# original's time moved from 6.0 to 11.9 s between single runs on the 134
# MB dump, 2026-12-04 and 05); peak RSS from the system's account of the
# child (internal/cmd/timeit). With the dump in the page cache (READBACK=1: dropped
# from it and read back first, timing.sh's reread_pages). Every run writes a new
# output file, as the original tools' single runs do: the file of the run
# before is removed first, outside the timing (replacing a 134 MB HPROF
# cost decrunch's rename 40 to 140 ms on 2026-11-27, the kernel freeing
# the old file's pages, which is no work of decrunch's).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
classes="$1"; dump="$2"
. "$root/scripts/timing.sh"
cp="$classes:${V1TOOLS_CP:-/usr/share/java/guava.jar:/usr/share/java/jsr305.jar}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/" ./cmd/crunch ./cmd/decrunch ./internal/cmd/pagelayout)
timeit_build "$work"
mkdir -p "$work/wrap"
cat >"$work/wrap/BufferedCrunch.java" <<'EOF'
public class BufferedCrunch {
    public static void main(String[] a) throws Exception {
        try (java.io.OutputStream out = new java.io.BufferedOutputStream(new java.io.FileOutputStream(a[1]), 1 << 16)) {
            com.badoo.hprof.cruncher.HprofCruncher.crunch(new com.badoo.hprof.cruncher.HprofFileSource(new java.io.File(a[0])), out, null);
        }
    }
}
EOF
javac -nowarn -cp "$cp" -d "$work/wrap" "$work/wrap/BufferedCrunch.java"

# run_best NAME OUT N CMD...: runs CMD, which writes OUT, N times, OUT
# removed before each run; prints "NAME: seconds s, MB MB" of the best run
# (whose line it leaves in $work/last, the median's in $work/median), with
# the median and the range where N is over 1.
run_best() {
    local name=$1 out=$2 n=$3; shift 3
    : >"$work/all"
    for _ in $(seq "$n"); do
        rm -f "$out"
        time1 "$work/all" "$@" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
    done
    best "$work/all" >"$work/last"
    # the median: the middle run's time, or the mean of the two middle ones
    sort -n "$work/all" | awk -v n="$n" '{ t[NR] = $1 } END { printf "%.6f\n", (t[int((n + 1) / 2)] + t[int(n / 2) + 1]) / 2 }' >"$work/median"
    read -r s kb _ <"$work/last"
    if [ "$n" -eq 1 ]; then
        printf "%-40s %8.3f s %7.0f MB\n" "$name:" "$s" "$((kb / 1024))"
        return
    fi
    printf "%-40s %8.3f s %7.0f MB  (best of %d; median %.3f s, %.3f to %.3f s)\n" "$name:" "$s" "$((kb / 1024))" "$n" \
        "$(cut -d' ' -f1 "$work/median")" "$s" "$(sort -n "$work/all" | tail -1 | cut -d' ' -f1)"
}
# result VAR: sets VAR to "BEST MEDIAN MB" of the last run_best.
result() {
    local b m kb
    read -r b kb _ <"$work/last"
    read -r m _ <"$work/median"
    printf -v "$1" '%s %s %s' "$b" "$m" "$((kb / 1024))"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

reread_pages "$dump"
echo "dump: $dump, $(stat -c %s "$dump") bytes"
cat "$dump" >/dev/null
echo "its pages: $(page_layout "$work/pagelayout" "$dump")"
orig_runs=${ORIG_RUNS:-1}
run_best "original cruncher (output buffered)" "$work/orig.bmd" "$orig_runs" java -cp "$cp:$work/wrap" BufferedCrunch "$dump" "$work/orig.bmd"
result oc
run_best "crunch" "$work/ours.bmd" "$RUNS" "$work/crunch" -q --force "$dump" "$work/ours.bmd"
result c
run_best "crunch --format v1" "$work/ours1.bmd" "$RUNS" "$work/crunch" -q --force --format v1 "$dump" "$work/ours1.bmd"
result c1
run_best "original decruncher (its own BMD)" "$work/orig.hprof" "$orig_runs" java -cp "$cp" com.badoo.bmd.decruncher.BmdDecruncher "$work/orig.bmd" "$work/orig.hprof"
result od
run_best "decrunch (our BMD)" "$work/ours.hprof" "$RUNS" "$work/decrunch" -q --force "$work/ours.bmd" -o "$work/ours.hprof"
result d
run_best "decrunch (the original's BMD)" "$work/ours-orig.hprof" "$RUNS" "$work/decrunch" -q --force "$work/orig.bmd" -o "$work/ours-orig.hprof"
result dv
echo "BMD bytes: original $(stat -c %s "$work/orig.bmd"), ours $(stat -c %s "$work/ours.bmd"), ours --format v1 $(stat -c %s "$work/ours1.bmd")"
# field N of "BEST MEDIAN MB".
f() { echo "$1" | cut -d' ' -f"$2"; }
# faster A B: how many times faster B is than A, best run against best
# run, and median against median where the originals ran more than once.
faster() {
    printf '%s x faster' "$(ratio "$(f "$1" 1)" "$(f "$2" 1)")"
    if [ "$orig_runs" -gt 1 ]; then
        printf ' best against best, %s x median against median' "$(ratio "$(f "$1" 2)" "$(f "$2" 2)")"
    fi
}
echo "crunch: $(faster "$oc" "$c") ($(faster "$oc" "$c1") with --format v1), $(ratio "$(f "$oc" 3)" "$(f "$c" 3)") x less memory"
echo "decrunch: $(faster "$od" "$d") on our BMD, $(faster "$od" "$dv") on the original's, $(ratio "$(f "$od" 3)" "$(f "$d" 3)") x less memory"
