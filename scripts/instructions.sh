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
# run twice under cachegrind with GOGC=off (the collector's background
# work under valgrind would add noise): with GOMAXPROCS=1, and with its
# second pass on two goroutines forced (HEAPCRUNCH_PIPELINE=on, and for
# crunch HEAPCRUNCH_SPLIT=off: the pipeline, not the spans), whose count is
# the work of both goroutines. For decrunch INPUT is a BMD file.
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
trap 'git -C "$root" worktree remove --force "$work/tree" 2>/dev/null; rm -rf "$work"' EXIT

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

first_one="" first_two=""
for rev in "$@"; do
    bin="$work/$tool.$rev"
    build "$rev" "$bin"
    one=$(count "$bin" "$work/out.$rev" GOMAXPROCS=1)
    two=$(count "$bin" "$work/out2.$rev" HEAPCRUNCH_PIPELINE=on HEAPCRUNCH_SPLIT=off)
    [[ -n $one && -n $two ]] || { echo "instructions: no count for $rev (did $tool fail?)" >&2; exit 1; }
    cmp -s "$work/out.$rev" "$work/out2.$rev" || { echo "instructions: $rev: one goroutine and two wrote different outputs" >&2; exit 1; }
    same=""
    if [[ -z $first_one ]]; then
        first_one=$one first_two=$two first=$rev
    elif cmp -s "$work/out.$first" "$work/out.$rev"; then
        same="  output: the same as $first"
    else
        same="  output: DIFFERENT from $first"
    fi
    printf '%-12s GOMAXPROCS=1 %8.1f M (%+.2f %%)   pipeline on %8.1f M (%+.2f %%)%s\n' "$rev" \
        "$(echo "$one / 1000000" | bc -l)" "$(echo "($one - $first_one) * 100 / $first_one" | bc -l)" \
        "$(echo "$two / 1000000" | bc -l)" "$(echo "($two - $first_two) * 100 / $first_two" | bc -l)" "$same"
done
