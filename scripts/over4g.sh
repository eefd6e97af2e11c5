#!/usr/bin/env bash
# Round trip a synthetic heap dump over 4 GiB through crunch and decrunch and
# check that nothing is lost: HPROF record lengths are u4, so such a dump is
# many HEAP DUMP SEGMENTs and every offset must be 64-bit.
#
#   scripts/over4g.sh [--idsize 8|4] [SIZE]     (SIZE default 4.5GiB; genhprof syntax)
#
# Two runs (or the one --idsize names), each under a minute on 2 cores:
#   8-byte IDs: big arrays of 1 to 16 MiB among 12.5 M small objects;
#   4-byte IDs: arrays of 3 to 48 MiB (over the 8 MiB segment size, so
#     decrunch streams them in records of their own) and one long[] of
#     2.5 GiB (a record body over 2 GiB), among 2.2 M small objects.
# For each:
#   1. internal/cmd/genhprof writes the dump and the counts of what it wrote;
#   2. genhprof -verify reads it back with hprof.Reader (same counts expected);
#   3. crunch turns it into BMD, then the dump is deleted (disk space);
#   4. decrunch turns the BMD back into HPROF, which must be over 4 GiB;
#   5. genhprof -verify reads the output from start to end (offsets, segment
#      lengths, HEAP DUMP END, final offset = file size) and its counts of
#      objects by kind, array elements, references, roots by kind and graph
#      fingerprints must equal the original's.
# Time and peak RSS of crunch and decrunch are printed. Needs about twice
# SIZE plus 1 GB free in ${TMPDIR:-/tmp} (the dump, then the output; about
# 10 GB for the default) and runs one heavy process at a time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
idsizes=(8 4)
size=4.5GiB
while (( $# > 0 )); do
  case "$1" in
    --idsize) idsizes=("${2:?--idsize needs 4 or 8}"); shift ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "over4g: unknown option $1" >&2; exit 2 ;;
    *) size="$1" ;;
  esac
  shift
done
for id in "${idsizes[@]}"; do
  [[ "$id" == 4 || "$id" == 8 ]] || { echo "over4g: --idsize must be 4 or 8" >&2; exit 2; }
done
# Generator flags per ID size (see above).
declare -A genflags=([8]="" [4]="-maxarray 48MiB -hugearray 2.5GiB")
work="$(mktemp -d "${TMPDIR:-/tmp}/over4g.XXXXXX")"
trap 'rm -rf "$work"' EXIT

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
# timed NAME CMD...: runs CMD, keeps "%e s %M KB" in $work/NAME.time.
timed() {
  local name=$1 rc=0; shift
  /usr/bin/time -f '%e s %M KB' -o "$work/$name.time" "$@" || rc=$?
  if (( rc )); then log "FAIL: $name exited with status $rc"; return "$rc"; fi
  log "$name: $(cat "$work/$name.time") (elapsed, peak RSS)"
}
bytes() { stat -c %s "$1"; }
# Counts that must survive the round trip: everything but the file layout.
body() { grep -v '^file\.' "$1"; }
get() { grep "^$2: " "$1" | cut -d' ' -f2; }

log "building genhprof, crunch, decrunch"
(cd "$root" && go build -o "$work/genhprof" ./internal/cmd/genhprof \
  && go build -o "$work/crunch" ./cmd/crunch && go build -o "$work/decrunch" ./cmd/decrunch)
avail=$(df --output=avail -B1 "$work" | tail -1)
need=$(( $(numfmt --from=auto "${size%B}") * 2 + (1 << 30) ))
log "work dir $work: $((avail >> 20)) MiB free, about $((need >> 20)) MiB needed"
if (( avail < need )); then
  echo "over4g: not enough free space in ${TMPDIR:-/tmp} (set TMPDIR to a larger disk)" >&2; exit 1
fi

summary=()
fail=0
for id in "${idsizes[@]}"; do
  d="$work/id$id"; mkdir -p "$d"
  log "== ${id}-byte IDs, target $size ${genflags[$id]}"
  # shellcheck disable=SC2086 # genflags holds several words
  timed "gen$id" "$work/genhprof" -o "$d/in.hprof" -size "$size" -idsize "$id" ${genflags[$id]} -counts "$d/gen.txt"
  in_bytes=$(bytes "$d/in.hprof")
  log "generated $in_bytes bytes: $(get "$d/gen.txt" objects.total) objects, $(get "$d/gen.txt" roots.total) roots, $(get "$d/gen.txt" elements.primitive_array) primitive array elements"
  timed "verify-in$id" "$work/genhprof" -verify "$d/in.hprof" > "$d/in.txt"
  log "input: $(get "$d/in.txt" file.records) records, $(get "$d/in.txt" file.heap_dump_segments) HEAP DUMP SEGMENTs, largest body $(get "$d/in.txt" file.max_record_body) bytes"
  if ! diff <(body "$d/gen.txt") <(body "$d/in.txt"); then
    echo "FAIL: the generator's counts and the input read back differ"; fail=1; continue
  fi
  timed "crunch$id" "$work/crunch" -q "$d/in.hprof" "$d/dump.bmd"
  bmd_bytes=$(bytes "$d/dump.bmd")
  log "BMD: $bmd_bytes bytes; deleting the input to save space"
  rm -f "$d/in.hprof"
  # --max-output 0: the synthetic dump is 100 times its BMD, over the
  # default limit meant for untrusted files.
  timed "decrunch$id" "$work/decrunch" -q --max-output 0 "$d/dump.bmd" -o "$d/out.hprof"
  out_bytes=$(bytes "$d/out.hprof")
  log "output: $out_bytes bytes"
  if (( out_bytes <= 1 << 32 )); then
    if (( in_bytes > 1 << 32 )); then
      echo "FAIL: the output is not over 4 GiB"; fail=1
    else
      log "note: SIZE is under 4 GiB, so is the output (a quick run, not the real check)"
    fi
  fi
  if ! timed "verify-out$id" "$work/genhprof" -verify "$d/out.hprof" > "$d/out.txt"; then
    echo "FAIL: the output does not read back"; fail=1; continue
  fi
  log "output: $(get "$d/out.txt" file.records) records, $(get "$d/out.txt" file.heap_dump_segments) HEAP DUMP SEGMENTs, $(get "$d/out.txt" file.heap_dump_ends) HEAP DUMP END, largest body $(get "$d/out.txt" file.max_record_body) bytes"
  if ! diff <(body "$d/in.txt") <(body "$d/out.txt"); then
    echo "FAIL: input and output counts differ"; fail=1; continue
  fi
  log "counts equal: $(body "$d/out.txt" | wc -l) lines (objects by kind, elements, refs, roots by kind, fingerprints)"
  rm -f "$d/out.hprof"
  summary+=("${id}-byte IDs: input $in_bytes bytes, $(get "$d/in.txt" objects.total) objects, $(get "$d/in.txt" roots.total) roots, $(get "$d/in.txt" file.heap_dump_segments) segments; BMD $bmd_bytes bytes; output $out_bytes bytes, $(get "$d/out.txt" file.heap_dump_segments) segments
    crunch   $(cat "$work/crunch$id.time")   decrunch $(cat "$work/decrunch$id.time")   (elapsed, peak RSS)")
done
echo
echo "over4g summary:"
for s in "${summary[@]}"; do echo "  $s"; done
if (( fail )); then echo "over4g: FAILED"; exit 1; fi
echo "over4g: passed"
