#!/usr/bin/env bash
# Where crunch's time goes on a dump, by phase: the last line of
# `crunch --stats` (the time from main's start to the output committed,
# before pass 1, pass 1, numbering, pass 2 and after, and the processor
# time; cmd/crunch's TestStatsTime), taken over RUNS runs (default 11) to
# /dev/null, with two cores and with GOMAXPROCS=1 in turn, and printed as
# the median of each part:
#
#   scripts/phases.sh DUMP.hprof
#   RUNS=21 scripts/phases.sh DUMP.hprof
#
# What comes before main (the process's start: the runtime and the
# packages' init, about 9 ms on this project's VM) and after the output is
# committed (the process's end, about 1 ms) is not in it: scripts/rounds.sh
# times whole runs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(($# == 1)) || { echo "usage: scripts/phases.sh DUMP.hprof" >&2; exit 2; }
[[ -r $1 ]] || { echo "phases: cannot read $1" >&2; exit 2; }
runs=${RUNS:-11}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "phases: RUNS must be a number above 0, got '$runs'" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
. "$root/scripts/timing.sh"
(cd "$root" && go build -o "$work/" ./cmd/crunch)

# parts LINE: the time line's numbers, tab-separated: whole, before pass 1,
# pass 1, numbering, pass 2, after, processor time (empty where not told).
parts() {
    sed -nE 's/^time: +([0-9.]+) ms from main.s start to the output committed: ([0-9.]+) ms before pass 1, pass 1 ([0-9.]+) ms, numbering ([0-9.]+) ms, pass 2 ([0-9.]+) ms, ([0-9.]+) ms after(; processor time ([0-9.]+) ms.*)?$/\1\t\2\t\3\t\4\t\5\t\6\t\8/p' <<<"$1"
}

for i in $(seq "$runs"); do
    for way in two one; do
        procs=()
        [[ $way == one ]] && procs=(env GOMAXPROCS=1)
        line=$("${procs[@]}" "$work/crunch" --stats --quiet "$1" /dev/null 2>&1 | grep '^time:') ||
            { echo "phases: crunch --stats printed no time line" >&2; exit 1; }
        p=$(parts "$line")
        [[ -n $p ]] || { echo "phases: cannot read: $line" >&2; exit 1; }
        echo "$p" >>"$work/$way"
    done
done

# col N FILE: the median of FILE's column N (timing.sh, median).
col() { median <(cut -f"$1" "$2"); }

echo "$1: $runs runs each way, medians in ms (from main's start to the output committed)"
printf '%-22s %8s %12s %8s %10s %8s %6s %10s\n' "" whole "before pass 1" "pass 1" numbering "pass 2" after processor
for way in two one; do
    label="two cores"
    [[ $way == one ]] && label="GOMAXPROCS=1"
    printf '%-22s %8s %12s %8s %10s %8s %6s %10s\n' "$label" "$(col 1 "$work/$way")" "$(col 2 "$work/$way")" \
        "$(col 3 "$work/$way")" "$(col 4 "$work/$way")" "$(col 5 "$work/$way")" "$(col 6 "$work/$way")" "$(col 7 "$work/$way")"
done
