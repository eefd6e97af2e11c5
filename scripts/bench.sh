#!/usr/bin/env bash
# Time and peak memory of crunch and decrunch on one dump, next to the time to
# read the input twice from the page cache (`cat DUMP DUMP >/dev/null`, the
# floor of crunch's two passes):
#   scripts/bench.sh DUMP.hprof    (e.g. the outputs of scripts/genbig.sh)
# READBACK=1 first drops the dump from the page cache and reads it back
# (timing.sh, reread_pages): its pages then lie together, which changes
# both the time of reading it twice and crunch's (README, Measured).
# crunch and decrunch run with both cores idle, with GOMAXPROCS=1, and
# with the other core kept busy by a shell loop (a phone's other work); each the best wall
# time of RUNS runs (default 3), peak RSS from /usr/bin/time. The timed runs
# write to /dev/null, so that the outputs they write do not push the input
# out of the page cache (this machine's holds about 1.7 GB: a 1.3 GB dump
# and its 1.3 GB decrunched HPROF do not fit); the BMD that decrunch reads
# is written once apart.
# It prints, before and after, what internal/cores measures: whether the
# second passes of crunch and decrunch run on two goroutines depends on it
# (the two cores of this VM share a cache at some times and not at
# others, which changes the times with two cores, not those with one).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
in="$1"; work="$(mktemp -d)"
. "$root/scripts/timing.sh"
trap 'busy_end; rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/" ./cmd/crunch ./cmd/decrunch ./internal/cmd/coreprobe ./internal/cmd/pagelayout)
timeit_build "$work"

# report NAME CMD...: runs CMD RUNS times and prints the best wall time, its
# RSS and its page faults.
report() {
    local name=$1; shift
    timed "$work/all" "$@"
    read -r s kb faults _ < <(best "$work/all")
    printf "%-28s %6.3f s, %5d MB peak RSS, %6d page faults\n" "$name:" "$s" "$((kb / 1024))" "$faults"
}

echo "cores: $("$work/coreprobe")"
reread_pages "$in"
echo "input: $(stat -c %s "$in") bytes; reading it twice from the page cache: $(read_twice "$in" "$work/read") s"
echo "its pages: $(page_layout "$work/pagelayout" "$in")"
report "crunch" "$work/crunch" -q "$in" /dev/null
GOMAXPROCS=1 report "crunch, GOMAXPROCS=1" "$work/crunch" -q "$in" /dev/null
busy_loop
report "crunch, one core busy" "$work/crunch" -q "$in" /dev/null
busy_end
"$work/crunch" -q "$in" "$work/out.bmd"
echo "BMD: $(stat -c %s "$work/out.bmd") bytes"
report "decrunch" "$work/decrunch" -q --force "$work/out.bmd" -o /dev/null
GOMAXPROCS=1 report "decrunch, GOMAXPROCS=1" "$work/decrunch" -q --force "$work/out.bmd" -o /dev/null
busy_loop
report "decrunch, one core busy" "$work/decrunch" -q --force "$work/out.bmd" -o /dev/null
busy_end
echo "cores: $("$work/coreprobe")"
