#!/usr/bin/env bash
# Rounds for two of issue 12's aims, whose ratios the minutes of this VM
# move more than any one run shows: crunch within 6 x the time of reading
# its dump twice, and crunch with GOMAXPROCS=1 within 1.5 x of its
# two-core time. Each round takes, for each DUMP in turn, a probe of the
# cores (internal/cmd/coreprobe -short), `cat DUMP DUMP >/dev/null` (the
# floor of crunch's two passes), crunch with two cores and crunch with
# GOMAXPROCS=1, both to /dev/null; the medians over the rounds are what the
# README's aims table gives as "rounds":
#
#   scripts/rounds.sh ROUNDS DUMP.hprof...
#
# Prints, per dump, its page layout before the first round and after the
# last (timing.sh, page_layout: as root; this VM's DAMON pages out a file
# left unread for about a minute, and pages read back come in smaller
# folios, docs/measurements.md, "Where the start goes, the split's output,
# and a dozen ways that did not pay"), the range of the probes, the
# medians and the two ratios, crunch's median page faults, and its median
# processor time and cores kept busy (busy, below), then the same medians
# and ratios over the rounds whose probe found the cores near, and over
# those that found them far.
# BUSY=1 keeps a shell loop running through the rounds (as bench.sh's
# "one core busy": a phone's other work), so that the medians say whether
# crunch's second core pays where another program holds a core: one core
# over two under 1 where it does not.
# READBACK=1 first drops each dump from the page cache and reads it back
# (timing.sh, reread_pages). Wall times from internal/cmd/timeit
# (timing.sh, time1), in ms; they include a process's start and end, as
# a user's run does.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(($# >= 2)) || { echo "usage: scripts/rounds.sh ROUNDS DUMP.hprof..." >&2; exit 2; }
rounds=$1; shift
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "rounds: ROUNDS must be a number above 0, got '$rounds'" >&2; exit 2; }
for f in "$@"; do [[ -r $f ]] || { echo "rounds: cannot read $f" >&2; exit 2; }; done
work="$(mktemp -d)"
. "$root/scripts/timing.sh"
trap 'busy_end; rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/" ./cmd/crunch ./internal/cmd/coreprobe ./internal/cmd/pagelayout)
timeit_build "$work"

# ms OUT CMD...: runs CMD, its output discarded, and appends its wall time
# in ms to OUT and its minor page faults to OUT.faults (time1). Until
# 2026-12-04 `date` around CMD took the time, which added 4.6 ms to each
# (internal/cmd/timeit's doc): reading the 134 MB dump twice read 25.7 ms
# where it takes 21 to 22, and the 6 x aim's ratio read low. The faults
# are the steadier measure of a change to what crunch touches: on this
# project's VM each costs about 11 µs, and their count moves far less
# from run to run than the time (docs/measurements.md, "The heap's gap
# below its huge pages").
ms() {
    local out=$1; shift
    : >"$work/ms"
    time1 "$work/ms" "$@"
    awk '{ printf "%.3f\n", $1 * 1000 }' "$work/ms" >>"$out"
    awk '{ print $3 }' "$work/ms" >>"$out.faults"
    awk '{ printf "%.3f\n", $4 * 1000 }' "$work/ms" >>"$out.cpu"
}

# busy TWO ONE [INDENT]: prints the medians of the processor time (user
# and system, all threads: timeit) of the two-core runs, whose times are
# in TWO, and of the one-core runs, in ONE, and of the cores each kept
# busy on average (processor time over wall time, run by run). The ratio
# of one core's wall time to two cores' is the ratio of their processor
# times times the ratio of the cores they kept busy: where one core takes
# about the processor time that two take together, as crunch does, the
# wall-time ratio is about the cores that two cores keep busy.
busy() {
    local two=$1 one=$2 ind=${3:-}
    paste "$two" "$two.cpu" | awk '{ printf "%.4f\n", $2 / $1 }' >"$two.busy"
    paste "$one" "$one.cpu" | awk '{ printf "%.4f\n", $2 / $1 }' >"$one.busy"
    awk -v i="$ind" -v t="$(median "$two.cpu")" -v o="$(median "$one.cpu")" \
        -v bt="$(median "$two.busy" %.4f)" -v bo="$(median "$one.busy" %.4f)" 'BEGIN {
        printf "%s  processor time, medians: crunch %.1f ms (%.2f cores busy), with GOMAXPROCS=1 %.1f ms (%.2f); one core / two %.3f x\n", i, t, bt, o, bo, o / t }'
}

n=0
for f in "$@"; do
    reread_pages "$f"
    cat "$f" >/dev/null
    n=$((n + 1))
    page_layout "$work/pagelayout" "$f" >"$work/$n.pages"
    for k in probe read two one; do : >"$work/$n.$k"; : >"$work/$n.$k.faults"; : >"$work/$n.$k.cpu"; done
done
loopNote=""
if [[ ${BUSY:-} == 1 ]]; then
    busy_loop
    loopNote=", a shell loop running through them (BUSY=1)"
fi
for _ in $(seq "$rounds"); do
    n=0
    for f in "$@"; do
        n=$((n + 1))
        "$work/coreprobe" -short >>"$work/$n.probe"
        ms "$work/$n.read" cat "$f" "$f"
        ms "$work/$n.two" "$work/crunch" -q "$f" /dev/null
        GOMAXPROCS=1 ms "$work/$n.one" "$work/crunch" -q "$f" /dev/null # no env(1): its own start would count
    done
done
busy_end
n=0
for f in "$@"; do
    n=$((n + 1))
    read2=$(median "$work/$n.read") two=$(median "$work/$n.two") one=$(median "$work/$n.one")
    echo "$f: $rounds rounds$loopNote"
    echo "  its pages before the rounds: $(cat "$work/$n.pages")"
    echo "  its pages after them: $(page_layout "$work/pagelayout" "$f")"
    grep -E '^[0-9]+$' "$work/$n.probe" | sort -n >"$work/$n.ns" || true
    echo "  probes: $(head -1 "$work/$n.ns") to $(tail -1 "$work/$n.ns") ns, $(grep -cvE '^[0-9]+$' "$work/$n.probe" || true) unanswered"
    echo "  medians: reading twice $read2 ms, crunch $two ms, with GOMAXPROCS=1 $one ms"
    awk -v r="$read2" -v t="$two" -v o="$one" 'BEGIN { printf "  crunch / reading twice %.2f x; one core / two %.3f x\n", t / r, o / t }'
    echo "  page faults, medians: crunch $(median "$work/$n.two.faults"), with GOMAXPROCS=1 $(median "$work/$n.one.faults")"
    busy "$work/$n.two" "$work/$n.one"
    # The rounds by what the probe before them found (near: under 150 ns,
    # internal/cores' limit; far: 150 ns or more; unanswered ones in
    # neither): this VM's cores change state from minute to minute, and
    # crunch reads its dump as the probe finds.
    for state in near far; do
        paste "$work/$n.probe" "$work/$n.read" "$work/$n.two" "$work/$n.one" "$work/$n.two.cpu" "$work/$n.one.cpu" |
            awk -v s="$state" -v d="$work/$n.$state" '
                BEGIN { split(".read .two .one .two.cpu .one.cpu", k, " "); for (j = 1; j <= 5; j++) printf "" > (d k[j]) }
                $1 ~ /^[0-9]+$/ && (s == "near") == ($1 < 150) { for (j = 1; j <= 5; j++) print $(j + 1) > (d k[j]) }'
        k=$(wc -l <"$work/$n.$state.two")
        ((k > 0)) || continue
        read2=$(median "$work/$n.$state.read") two=$(median "$work/$n.$state.two") one=$(median "$work/$n.$state.one")
        awk -v s="$state" -v k="$k" -v r="$read2" -v t="$two" -v o="$one" 'BEGIN {
            printf "  %s (%d rounds): reading twice %s ms, crunch %s ms, with GOMAXPROCS=1 %s ms; %.2f x, %.3f x\n", s, k, r, t, o, t / r, o / t }'
        busy "$work/$n.$state.two" "$work/$n.$state.one" "  "
    done
done
