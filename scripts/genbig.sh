#!/usr/bin/env bash
# Generate the benchmark heap dumps (never committed: they are large).
#
#   scripts/genbig.sh [DIR]        (default DIR: ${TMPDIR:-/tmp}/heapcrunch-bench)
#
# Writes, with testdata/gen/Big.java through scripts/gendump.sh:
#   DIR/big-200m.hprof    about 200 MB,  about 3.4 million objects
#   DIR/big-1300m.hprof   about 1.3 GB,  about 23 million objects
# A file that already exists is skipped (delete it to regenerate). Needs about 2.5 GB of
# free memory for the JVM and 1.5 GB of disk; the 1.3 GB one takes about a minute.
set -euo pipefail

DIR=${1:-${TMPDIR:-/tmp}/heapcrunch-bench}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$DIR"

for mb in 200 1300; do
    out=$DIR/big-${mb}m.hprof
    if [[ -e "$out" ]]; then
        echo "genbig: $out exists, skipped" >&2
        continue
    fi
    t0=$SECONDS
    "$ROOT/scripts/gendump.sh" Big "$out.part" "$mb"
    mv "$out.part" "$out"
    echo "genbig: $out: $(stat -c %s "$out") bytes in $((SECONDS - t0)) s" >&2
done
