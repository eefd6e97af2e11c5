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
# decruncher buffers its own streams. Each original tool runs once, each of
# ours RUNS times (default 3), best wall time kept; peak RSS from
# /usr/bin/time. With the dump in the page cache (READBACK=1: dropped
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

# run NAME CMD...: runs CMD once, printing "NAME: seconds s, MB MB".
run() {
    local name=$1; shift
    : >"$work/last"
    time1 "$work/last" "$@" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
    read -r s kb _ <"$work/last"
    printf "%-40s %8.3f s %7.0f MB\n" "$name:" "$s" "$((kb / 1024))"
}
# run_best NAME OUT CMD...: runs CMD, which writes OUT, RUNS times, keeping
# the best time; OUT is removed before each run.
run_best() {
    local name=$1 out=$2; shift 2
    : >"$work/all"
    for _ in $(seq "$RUNS"); do
        rm -f "$out"
        time1 "$work/all" "$@" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
    done
    best "$work/all" >"$work/last"
    read -r s kb _ <"$work/last"
    printf "%-40s %8.3f s %7.0f MB  (best of %d)\n" "$name:" "$s" "$((kb / 1024))" "$RUNS"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

reread_pages "$dump"
echo "dump: $dump, $(stat -c %s "$dump") bytes"
cat "$dump" >/dev/null
echo "its pages: $(page_layout "$work/pagelayout" "$dump")"
run "original cruncher (output buffered)" java -cp "$cp:$work/wrap" BufferedCrunch "$dump" "$work/orig.bmd"
read -r oc ocm _ <"$work/last"
run_best "crunch" "$work/ours.bmd" "$work/crunch" -q --force "$dump" "$work/ours.bmd"
read -r c cm _ <"$work/last"
run_best "crunch --format v1" "$work/ours1.bmd" "$work/crunch" -q --force --format v1 "$dump" "$work/ours1.bmd"
read -r c1 _ <"$work/last"
run "original decruncher (its own BMD)" java -cp "$cp" com.badoo.bmd.decruncher.BmdDecruncher "$work/orig.bmd" "$work/orig.hprof"
read -r od odm _ <"$work/last"
run_best "decrunch (our BMD)" "$work/ours.hprof" "$work/decrunch" -q --force "$work/ours.bmd" -o "$work/ours.hprof"
read -r d dm _ <"$work/last"
run_best "decrunch (the original's BMD)" "$work/ours-orig.hprof" "$work/decrunch" -q --force "$work/orig.bmd" -o "$work/ours-orig.hprof"
read -r dv _ <"$work/last"
echo "BMD bytes: original $(stat -c %s "$work/orig.bmd"), ours $(stat -c %s "$work/ours.bmd"), ours --format v1 $(stat -c %s "$work/ours1.bmd")"
echo "crunch: $(ratio "$oc" "$c") x faster ($(ratio "$oc" "$c1") x with --format v1), $(ratio "$ocm" "$cm") x less memory"
echo "decrunch: $(ratio "$od" "$d") x faster on our BMD, $(ratio "$od" "$dv") x on the original's, $(ratio "$odm" "$dm") x less memory"
