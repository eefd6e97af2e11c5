#!/usr/bin/env bash
# When do the second passes of crunch and decrunch pay for their second
# goroutine? For SECONDS (default 600), round after round, what
# internal/cores measures (the round trip of a cache line between two
# threads, in a process of its own, before and after the round) next to
# the wall times of crunch and of decrunch as users run them (auto: each
# measures for itself), and with their pipeline forced on and off
# (HEAPCRUNCH_PIPELINE; both cores for Go either way, so crunch's first
# pass uses both):
#
#   scripts/cores.sh DUMP.hprof [SECONDS]
#
# A line per round, then the range of each time over the rounds whose two
# probes agree: both under 150 ns (internal/cores takes two goroutines),
# both over (it takes one). The two cores of the machine the README's
# figures come from share a cache at some times and not at others.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
in="$1"; secs="${2:-600}"; work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
. "$root/scripts/timing.sh"
(cd "$root" && go build -o "$work/" ./cmd/crunch ./cmd/decrunch ./internal/cmd/coreprobe)
timeit_build "$work"
"$work/crunch" -q "$in" "$work/out.bmd"
cat "$in" >/dev/null

# probe: the round trip in ns, or why there is none (nostart, slow).
probe() { "$work/coreprobe" -short; }

# wall PIPELINE CMD...: the wall time of one run of CMD, its pipeline
# auto (as users run it), on or off.
wall() {
    local p=$1; shift
    : >"$work/t"
    HEAPCRUNCH_PIPELINE=$p time1 "$work/t" "$@"
    printf "%.3f" "$(cut -d' ' -f1 "$work/t")"
}

echo "time     probe(ns) before after | crunch auto on off | decrunch auto on off (s)"
end=$((SECONDS + secs))
while ((SECONDS < end)); do
    a=$(probe)
    c=(); d=()
    for p in auto on off; do
        c+=("$(wall "$p" "$work/crunch" -q "$in" /dev/null)")
        d+=("$(wall "$p" "$work/decrunch" -q --force "$work/out.bmd" -o /dev/null)")
    done
    b=$(probe)
    echo "$(date +%H:%M:%S) $a $b | ${c[*]} | ${d[*]}"
    sleep 10
done | tee "$work/log"

# Fields: 1 time, 2-3 probes, 5-7 crunch auto on off, 9-11 decrunch auto on off.
awk '$2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ {
    band = ($2 < 150 && $3 < 150) ? "near" : ($2 >= 150 && $3 >= 150) ? "far" : ""
    if (band == "") next
    n[band]++
    for (i = 5; i <= 11; i++) {
        if (i == 8) continue
        k = band SUBSEP i
        if (!(k in lo) || $i < lo[k]) lo[k] = $i
        if (!(k in hi) || $i > hi[k]) hi[k] = $i
    }
    if (!(band in plo) || $2 < plo[band]) plo[band] = $2
    if (!(band in phi) || $2 > phi[band]) phi[band] = $2
}
$2 !~ /^[0-9]+$/ { failed[$2]++ }
$3 !~ /^[0-9]+$/ { failed[$3]++ }
END {
    for (band in n)
        printf "%s (%d rounds, probe before %d-%d ns): crunch auto %s-%s s, on %s-%s s, off %s-%s s; decrunch auto %s-%s s, on %s-%s s, off %s-%s s\n",
            band, n[band], plo[band], phi[band],
            lo[band, 5], hi[band, 5], lo[band, 6], hi[band, 6], lo[band, 7], hi[band, 7],
            lo[band, 9], hi[band, 9], lo[band, 10], hi[band, 10], lo[band, 11], hi[band, 11]
    for (f in failed) printf "probes that failed (%s): %d\n", f, failed[f]
}' "$work/log"
