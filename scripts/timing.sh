# Sourced by scripts/bench.sh, scale.sh, vsoriginal.sh, rounds.sh and phases.sh: the one way they time
# a command and read the floor of two passes. RUNS (default 3) runs each.

RUNS=${RUNS:-3}

# TIMEIT is the timer, internal/cmd/timeit, which each script builds beside
# its binaries (timeit_build) before it times anything.
TIMEIT=${TIMEIT:-}

# busy_loop starts a shell loop that keeps a core busy (a phone's other
# work: bench.sh's "one core busy", rounds.sh's BUSY=1); busy_end stops it,
# and does nothing where none runs. A script that starts one calls busy_end
# in its EXIT trap too, so that no loop outlives it.
BUSY_PID=""
busy_loop() {
    sh -c 'while :; do :; done' &
    BUSY_PID=$!
}
busy_end() {
    [[ -z $BUSY_PID ]] || kill "$BUSY_PID" 2>/dev/null || true
    BUSY_PID=""
}

# timeit_build DIR: builds internal/cmd/timeit into DIR and sets TIMEIT.
timeit_build() {
    (cd "$(dirname "${BASH_SOURCE[0]}")/.." && go build -o "$1/timeit" ./internal/cmd/timeit)
    TIMEIT=$1/timeit
}

# time1 OUT CMD...: runs CMD once, its standard output discarded, and
# appends to OUT a "seconds KB faults cpu" line (internal/cmd/timeit): the
# wall time from just before CMD's process starts to just after it ends,
# the peak RSS, the minor page faults (each the first touch of a page of
# memory: dear on some VMs, and unlike the time the same from run to run)
# and the processor time of all its threads, user and system, in seconds.
# Returns CMD's exit status. Until 2026-12-04 it took the time with `date`
# around /usr/bin/time, which added 8.6 ms to every command (timeit's doc).
time1() {
    local out=$1; shift
    "${TIMEIT:?timing.sh: timeit_build first}" "$out" "$@"
}

# timed OUT CMD...: runs CMD RUNS times (time1), a line per run in OUT.
timed() {
    local out=$1; shift
    : >"$out"
    for _ in $(seq "$RUNS"); do
        time1 "$out" "$@"
    done
}

# best OUT: the line of OUT (from timed) with the smallest time.
best() { sort -n "$1" | head -1; }

# median FILE [FORMAT]: the median of FILE's numbers, one a line (empty
# lines left out), printed with FORMAT (default %.1f); "-" where it has
# none.
median() { sort -g "$1" | awk -v f="${2:-%.1f}" 'NF { v[++n] = $1 } END { if (n == 0) { printf "-"; exit } printf f, n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'; }

# read_twice FILE OUT: puts FILE in the page cache, then prints the best
# time of RUNS runs of `cat FILE FILE >/dev/null` (their times in OUT):
# the floor of crunch's two passes.
read_twice() {
    local f=$1 out=$2
    cat "$f" >/dev/null
    : >"$out"
    for _ in $(seq "$RUNS"); do
        time1 "$out" cat "$f" "$f"
    done
    best "$out" | cut -d' ' -f1
}

# page_layout BIN FILE: how FILE's pages lie in the page cache, from
# internal/cmd/pagelayout built as BIN (it needs root), or why it cannot
# tell. Reading the same dump from the page cache took 2.4 times as long
# when its pages were scattered in physical memory (as a JVM's writes left
# them) as when they were not (after cp, or read back from the disk), and
# crunch's time and the floor of reading twice change with it
# (docs/measurements.md, "Where the dump's pages lie").
page_layout() {
    local out
    out=$("$1" "$2" 2>&1) || true
    out=${out#"$2: "}
    echo "${out#pagelayout: }"
}

# reread_pages FILE: with READBACK=1, drops FILE's pages from the page cache
# (posix_fadvise(POSIX_FADV_DONTNEED), by dd) and reads it back from the
# disk, so that its pages lie together in memory as after any read from
# the disk; without it, does nothing, and the pages stay as they are (a
# dump just written lies as its writer left it). Both are real states of a
# dump to crunch; the figures of the README name which. The file stays so
# for later runs: to measure it as written again, write it again.
reread_pages() {
    [[ ${READBACK:-} == 1 ]] || return 0
    sync "$1"
    dd if="$1" iflag=nocache count=0 status=none
    cat "$1" >/dev/null
}
