#!/usr/bin/env bash
# Time and peak memory of crunch and decrunch on a dump, next to the time to
# read the input twice from the page cache (the speed target's yardstick).
#   scripts/bench.sh DUMP.hprof    (e.g. the outputs of scripts/genbig.sh)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
in="$1"; work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
go build -o "$work/crunch" "$root/cmd/crunch"; go build -o "$work/decrunch" "$root/cmd/decrunch"
cat "$in" | wc -c >/dev/null   # warm the page cache
t0=$(date +%s.%N); cat "$in" | wc -c >/dev/null; cat "$in" | wc -c >/dev/null; t1=$(date +%s.%N)
echo "input: $(stat -c %s "$in") bytes; reading it twice from the page cache: $(echo "$t1 - $t0" | bc) s"
/usr/bin/time -f "crunch:   %e s, %M KB peak RSS" "$work/crunch" -q "$in" "$work/out.bmd"
echo "BMD: $(stat -c %s "$work/out.bmd") bytes"
/usr/bin/time -f "decrunch: %e s, %M KB peak RSS" "$work/decrunch" -q "$work/out.bmd" -o "$work/out.hprof"
