#!/usr/bin/env bash
# Instructions run by crunch (or decrunch) at one or more commits, counted
# by valgrind's cachegrind: deterministic to about 0.05 %, where wall times
# on this machine vary by 10 to 30 % from run to run (scripts/ab.sh), so
# that a change of 1 % shows. The "cachegrind" figures of the README and docs/measurements.md are counts
# taken this way.
#
#   scripts/instructions.sh crunch|decrunch INPUT REV...
#
# For each REV (a commit, or "work" for the working tree) the command is
# built as users build it (go build, with the committed PGO profile) and
# run under cachegrind with GOGC=off (the collector's background work
# under valgrind would add noise): with GOMAXPROCS=1, and with its second
# pass on two goroutines forced (HEAPCRUNCH_PIPELINE=on, and for crunch
# HEAPCRUNCH_SPLIT=off: the pipeline, not the spans), and for crunch with
# it split by spans (HEAPCRUNCH_SPLIT=on), whose counts are the work of
# all goroutines. Only the one-goroutine count is that deterministic:
# valgrind runs one thread at a time, and a goroutine that spins waiting
# for another (the core probe of internal/cores, the pipeline) can count
# billions more in one run (the split on the 134 MB dump: 2,476 M in two
# runs, 29,061 and 48,289 M in two others, 2026-12-03). The two-goroutine
# counts are therefore the least of TWO_RUNS runs (default 3). For
# decrunch INPUT is a BMD file.
# Prints a line per REV, with each count's change from the first REV, and
# whether the output (to a file, compared byte for byte) is the first
# REV's.
# Example: scripts/instructions.sh crunch /tmp/v1work/big134.hprof HEAD~3 HEAD
#
# Installs valgrind with apt-get when it is missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(($# >= 3)) || { echo "usage: scripts/instructions.sh crunch|decrunch INPUT REV..." >&2; exit 2; }
tool=$1 in=$2
shift 2
[[ $tool == crunch || $tool == decrunch ]] || { echo "instructions: tool must be crunch or decrunch, got '$tool'" >&2; exit 2; }
[[ -r $in ]] || { echo "instructions: cannot read $in" >&2; exit 2; }
if ! command -v valgrind >/dev/null; then
    apt-get install -y -qq valgrind >/dev/null
fi
work="$(mktemp -d)"
trap 'git -C "$root" worktree remove --force "$work/tree" 2>/dev/null || true; rm -rf "$work"' EXIT

build() { # build REV BIN
    if [[ $1 == work ]]; then
        (cd "$root" && go build -o "$2" "./cmd/$tool")
        return
    fi
    git -C "$root" worktree add -q --detach "$work/tree" "$1"
    (cd "$work/tree" && go build -o "$2" "./cmd/$tool")
    git -C "$root" worktree remove --force "$work/tree"
}

count() { # count BIN OUT [ENV...]: the instructions of one run
    local bin=$1 out=$2
    shift 2
    local args=(-q --force "$in" "$out")
    [[ $tool == decrunch ]] && args=(-q --force "$in" -o "$out")
    # GODEBUG=cpu.rdtscp=off: valgrind does not know RDTSCP, which Go's
    # runtime reads its clock with on a processor that has it (the AMD VM
    # of 2026-12-02 on; SIGILL in runtime.cputicks); without it the runtime
    # uses RDTSC, and crunch's own work is the same.
    if ! env GOGC=off GODEBUG="${GODEBUG:+$GODEBUG,}cpu.rdtscp=off" "$@" valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        "$bin" "${args[@]}" >"$work/valgrind.log" 2>&1; then
        echo "instructions: $tool under valgrind failed ($*):" >&2
        grep -v '^==' "$work/valgrind.log" | head -20 >&2
        return 1
    fi
    awk '/I *refs:/ {gsub(",", "", $NF); print $NF}' "$work/valgrind.log"
}

least() { # least BIN OUT [ENV...]: the least count of TWO_RUNS runs
    local n best=""
    for _ in $(seq "${TWO_RUNS:-3}"); do
        n=$(count "$@") || return 1
        if [[ -z $best ]] || ((n < best)); then best=$n; fi
    done
    echo "$best"
}

pct() { echo "($1 - $2) * 100 / $2" | bc -l; }

first_one="" first_two="" first_split=""
for rev in "$@"; do
    bin="$work/$tool.$rev"
    build "$rev" "$bin"
    one=$(count "$bin" "$work/out.$rev" GOMAXPROCS=1)
    two=$(least "$bin" "$work/out2.$rev" HEAPCRUNCH_PIPELINE=on HEAPCRUNCH_SPLIT=off)
    [[ -n $one && -n $two ]] || { echo "instructions: no count for $rev (did $tool fail?)" >&2; exit 1; }
    cmp -s "$work/out.$rev" "$work/out2.$rev" || { echo "instructions: $rev: one goroutine and two wrote different outputs" >&2; exit 1; }
    split=""
    if [[ $tool == crunch ]]; then
        split=$(least "$bin" "$work/out3.$rev" HEAPCRUNCH_SPLIT=on)
        [[ -n $split ]] || { echo "instructions: no count for $rev split (did $tool fail?)" >&2; exit 1; }
        cmp -s "$work/out.$rev" "$work/out3.$rev" || { echo "instructions: $rev: one goroutine and the split wrote different outputs" >&2; exit 1; }
    fi
    same=""
    if [[ -z $first_one ]]; then
        first_one=$one first_two=$two first_split=$split first=$rev
    elif cmp -s "$work/out.$first" "$work/out.$rev"; then
        same="  output: the same as $first"
    else
        same="  output: DIFFERENT from $first"
    fi
    splitcol=""
    if [[ -n $split ]]; then
        splitcol=$(printf '   split %8.1f M (%+.2f %%)' "$(echo "$split / 1000000" | bc -l)" "$(pct "$split" "$first_split")")
    fi
    printf '%-12s GOMAXPROCS=1 %8.1f M (%+.2f %%)   pipeline on %8.1f M (%+.2f %%)%s%s\n' "$rev" \
        "$(echo "$one / 1000000" | bc -l)" "$(pct "$one" "$first_one")" \
        "$(echo "$two / 1000000" | bc -l)" "$(pct "$two" "$first_two")" "$splitcol" "$same"
done
