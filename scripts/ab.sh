#!/usr/bin/env bash
# Alternating runs of two commits' crunch (or decrunch), for comparing them
# in an hour whose speed drifts: this machine runs up to twice as slow for
# minutes at a time, so only runs taken side by side, in the same minutes,
# compare. A round is taken only while the cores share a cache (coreprobe
# under 100 ns: with the other core busy, or elsewhere, a two-core run says
# little). CORES=any takes every round, whatever the probe says: on a
# machine whose cores are far apart for hours (the probe 360 to 640 ns on
# 2026-12-04), where crunch reads at offsets and the rounds still compare
# two builds in the same minutes. CORES=far takes only rounds whose probe
# answers 150 ns or more (internal/cores' limit for near): on a machine
# whose cores are near in some minutes and far in others (the Zen 4 VM of
# 2026-12-04), for a change that matters only where they are far.
#
#   scripts/ab.sh crunch|decrunch OLDREV NEWREV ROUNDS INPUT...
#
# Each round runs, for each INPUT, the old build then the new one with two
# cores, then the same with GOMAXPROCS=1, output to /dev/null. Prints per
# input, cores and build the best and median of the rounds, and the ratio
# of the one-core best to the two-core best, and each input's page layout
# before the first round and after the last (timing.sh, page_layout: as
# root), since this VM's DAMON pages out a file left unread for about a
# minute and what is read back lies in smaller folios: rounds that wait
# long for the cores' state run on a page cache that changes under them
# (docs/measurements.md, "Where the start goes, the split's output, and a
# dozen ways that did not pay"). For decrunch the inputs are BMD files.
# The "alternating runs against <commit>" of docs/measurements.md came
# from this method (at first a throwaway script of the same steps).
# Example: scripts/ab.sh crunch 67c3929 HEAD 35 big134.hprof big-1300m.hprof
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(($# >= 5)) || { echo "usage: scripts/ab.sh crunch|decrunch OLDREV NEWREV ROUNDS INPUT..." >&2; exit 2; }
tool=$1 oldrev=$2 newrev=$3 rounds=$4
shift 4
[[ $tool == crunch || $tool == decrunch ]] || { echo "ab: tool must be crunch or decrunch, got '$tool'" >&2; exit 2; }
[[ $rounds =~ ^[0-9]+$ ]] || { echo "ab: ROUNDS must be a number, got '$rounds'" >&2; exit 2; }
for f in "$@"; do [[ -r $f ]] || { echo "ab: cannot read $f" >&2; exit 2; }; done
case ${CORES:-} in
"" | near | far | any) ;;
*) echo "ab: CORES must be near (the default), far or any, got '$CORES'" >&2; exit 2 ;;
esac
work="$(mktemp -d)"
trap 'git -C "$root" worktree remove --force "$work/tree" 2>/dev/null || true; rm -rf "$work"' EXIT
source "$root/scripts/timing.sh"

(cd "$root" && go build -o "$work/" ./internal/cmd/coreprobe ./internal/cmd/pagelayout)
timeit_build "$work"
for v in old new; do
    rev=$oldrev
    [[ $v == new ]] && rev=$newrev
    git -C "$root" worktree add -q --detach "$work/tree" "$rev"
    (cd "$work/tree" && go build -o "$work/$tool.$v" "./cmd/$tool")
    git -C "$root" worktree remove --force "$work/tree"
done

run() { # run BUILD PROCS INPUT: one timed run, appended to its file
    local v=$1 procs=$2 in=$3 out="$work/t.$1.$2.$(basename "$3")"
    if [[ $tool == crunch ]]; then
        GOMAXPROCS=$procs time1 "$out" "$work/$tool.$v" -q --force "$in" /dev/null
    else
        GOMAXPROCS=$procs time1 "$out" "$work/$tool.$v" -q --force "$in" -o /dev/null
    fi
}

for in in "$@"; do
    page_layout "$work/pagelayout" "$in" >"$work/pages.$(basename "$in")"
done
done_rounds=0 waited=0
while ((done_rounds < rounds)); do
    p=$("$work/coreprobe" -short 2>/dev/null || true)
    take=0
    case ${CORES:-} in
    any) take=1 ;;
    far) [[ $p =~ ^[0-9]+$ ]] && ((p >= 150)) && take=1 ;;
    *) [[ $p =~ ^[0-9]+$ ]] && ((p < 100)) && take=1 ;;
    esac
    if ((!take)); then
        waited=$((waited + 1))
        ((waited % 30 == 0)) && echo "ab: waiting for the cores' state asked (CORES=${CORES:-near}; probe: $p)" >&2
        sleep 2
        continue
    fi
    for in in "$@"; do
        for procs in 2 1; do
            run old "$procs" "$in"
            run new "$procs" "$in"
        done
    done
    done_rounds=$((done_rounds + 1))
done

stat() { # stat FILE: "best median" of its times
    sort -n "$1" | awk '{t[NR]=$1} END {printf "%.3f %.3f", t[1], t[int((NR+1)/2)]}'
}
echo "$tool, $oldrev (old) against $newrev (new), $rounds rounds; seconds, best and median"
for in in "$@"; do
    b=$(basename "$in")
    echo "$b: its pages before the rounds: $(cat "$work/pages.$b")"
    echo "$b: its pages after them: $(page_layout "$work/pagelayout" "$in")"
    for v in old new; do
        read -r two two_med <<<"$(stat "$work/t.$v.2.$b")"
        read -r one one_med <<<"$(stat "$work/t.$v.1.$b")"
        printf '%-24s %-3s  two cores %s (median %s)  one core %s (median %s)  ratio %.2f\n' \
            "$b" "$v" "$two" "$two_med" "$one" "$one_med" "$(echo "$one / $two" | bc -l)"
    done
done
