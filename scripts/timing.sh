# Sourced by scripts/bench.sh and scripts/scale.sh: the one way they time
# a command and read the floor of two passes. RUNS (default 3) runs each.

RUNS=${RUNS:-3}

# timed OUT CMD...: runs CMD RUNS times, its standard output discarded, and
# writes to OUT a "seconds KB" line per run (wall time, peak RSS, from
# /usr/bin/time).
timed() {
    local out=$1; shift
    : >"$out"
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -a -o "$out" -f "%e %M" "$@" >/dev/null
    done
}

# best OUT: the line of OUT (from timed) with the smallest time.
best() { sort -n "$1" | head -1; }

# read_twice FILE OUT: puts FILE in the page cache, then prints the best
# time of RUNS runs of `cat FILE FILE >/dev/null` (their times in OUT):
# the floor of crunch's two passes.
read_twice() {
    local f=$1 out=$2
    cat "$f" >/dev/null
    : >"$out"
    for _ in $(seq "$RUNS"); do
        local t0 t1
        t0=$(date +%s.%N); cat "$f" "$f" >/dev/null; t1=$(date +%s.%N)
        echo "$t1 - $t0" | bc >>"$out"
    done
    best "$out"
}
