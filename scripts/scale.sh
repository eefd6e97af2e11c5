#!/usr/bin/env bash
# Time and peak memory of crunch and decrunch against the number of objects:
# generates dumps of about 1e5 to 3e7 objects (internal/cmd/genhprof, HotSpot
# layout: one heap, objects at ascending aligned addresses) with 4- and 8-byte
# IDs, one at a time (the largest is 1.6 GB; each is deleted after use), and
# prints a Markdown table.
#
#   scripts/scale.sh [DIR] [COUNTS...]   (DIR default ${TMPDIR:-/tmp}/heapcrunch-scale;
#                                        COUNTS default 1e5 3e5 1e6 3e6 1e7 3e7)
#
# "read x2" is `cat DUMP DUMP >/dev/null` with the dump in the page cache, the
# floor of two passes over the file; "x" columns divide by it. Times are wall
# seconds, the best of RUNS runs (default 3; set RUNS=1 for a quick look), with
# peak RSS from /usr/bin/time; outputs of timed runs go to /dev/null.
# "budget" is the memory target: 12 bytes per object + 64 MB. "1 core" runs
# crunch with GOMAXPROCS=1.
#
# IDSIZES (default "4 8") picks the ID sizes; SEGSIZE (default genhprof's 32
# MiB) the largest HEAP DUMP SEGMENT, e.g. an Android dump's:
#   IDSIZES=4 SEGSIZE=4KiB scripts/scale.sh   (ART writes 128 objects or 4 KiB a segment)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${1:-${TMPDIR:-/tmp}/heapcrunch-scale}
shift || true
COUNTS=("$@")
[[ ${#COUNTS[@]} -gt 0 ]] || COUNTS=(1e5 3e5 1e6 3e6 1e7 3e7)
. "$ROOT/scripts/timing.sh"
mkdir -p "$DIR"
bin=$DIR/bin
mkdir -p "$bin"
(cd "$ROOT" && go build -o "$bin/crunch" ./cmd/crunch && go build -o "$bin/decrunch" ./cmd/decrunch &&
    go build -o "$bin/genhprof" ./internal/cmd/genhprof)
timeit_build "$bin"

echo "| ID size | objects | dump bytes | read x2 s | crunch s | x | crunch MB | budget MB | 1 core s | BMD bytes | decrunch s | decrunch MB |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for idsize in ${IDSIZES:-4 8}; do
    # genhprof writes about 42.5 (4-byte IDs) or 54 (8-byte IDs) bytes per object.
    per=$([[ $idsize == 4 ]] && echo 42.5 || echo 54)
    for n in "${COUNTS[@]}"; do
        size=$(awk -v n="$n" -v p="$per" 'BEGIN { printf "%d", n * p }')
        dump=$DIR/scale-$idsize-$n.hprof
        "$bin/genhprof" -o "$dump" -size "$size" -idsize "$idsize" -maxarray 64KiB -segsize "${SEGSIZE:-32MiB}" -counts "$dump.counts" 2>/dev/null
        objects=$(awk '$1 == "objects.total:" { print $2 }' "$dump.counts")
        read2=$(read_twice "$dump" "$DIR/read")
        # The timed runs write to /dev/null (see scripts/bench.sh: outputs
        # written to disk push the dump out of this machine's page cache).
        timed "$DIR/c" "$bin/crunch" -q "$dump" /dev/null
        GOMAXPROCS=1 timed "$DIR/c1" "$bin/crunch" -q "$dump" /dev/null
        "$bin/crunch" -q --force "$dump" "$DIR/out.bmd"
        timed "$DIR/d" "$bin/decrunch" -q --force "$DIR/out.bmd" -o /dev/null
        read -r ct cm _ <<<"$(best "$DIR/c")"
        read -r c1t _ <<<"$(best "$DIR/c1")"
        read -r dt dm _ <<<"$(best "$DIR/d")"
        awk -v id="$idsize" -v n="$objects" -v b="$(stat -c %s "$dump")" -v r="$read2" -v ct="$ct" -v cm="$cm" \
            -v c1="$c1t" -v bmd="$(stat -c %s "$DIR/out.bmd")" -v dt="$dt" -v dm="$dm" 'BEGIN {
            printf "| %d | %d | %d | %.3f | %.3f | %.1f | %.0f | %.0f | %.3f | %d | %.3f | %.0f |\n",
                id, n, b, r, ct, ct / r, cm / 1024, 12 * n / 1048576 + 64, c1, bmd, dt, dm / 1024 }'
        rm -f "$dump" "$dump.counts" "$DIR/out.bmd" "$DIR/out.hprof"
    done
done
