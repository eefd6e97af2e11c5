#!/usr/bin/env bash
# Round trip dumps through crunch and decrunch and compare perflib's summaries (Android
# Studio's HPROF parser) of the original and of the restored dumps: (a) crunch with defaults
# and decrunch with no name source, each unknown$<hash> then matched to the original's name
# (internal/cmd/unhash); (b) crunch --keep-strings. Prints one line per dump; the diffs stay
# in the work folder.
#
#   scripts/perflib/roundtrip.sh OUT [DUMP...]   (OUT from build.sh; default dumps: as
#                                                 scripts/roundtrip.sh, without the multidump)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$(cd "$1" && pwd)"; shift
work="$(mktemp -d)"
echo "perflib roundtrip: work folder $work"
(cd "$root" && go build -o "$work/crunch" ./cmd/crunch && go build -o "$work/decrunch" ./cmd/decrunch &&
  go build -o "$work/unhash" ./internal/cmd/unhash) || exit 1
dumps=("$@")
if [[ ${#dumps[@]} -eq 0 ]]; then
  dumps=("$root"/testdata/*.hprof.gz "$root"/testdata/libuser/*.hprof.gz)
  for f in "$root"/../shared/corpus/*; do case "$f" in *hprof*|*.bin) dumps+=("$f") ;; esac; done
fi
summary() { "$root/scripts/perflib/summary.sh" "$out" "$1" > "$2" 2> "$2.err"; }
for d in "${dumps[@]}"; do
  n=$(basename "$d"); n=${n%.gz}; n=${n%.bz2}; w="$work/$n"
  case "$d" in *.gz) gzip -dc "$d" > "$w.orig.hprof" ;; *.bz2) bzip2 -dc "$d" > "$w.orig.hprof" ;; *) cp "$d" "$w.orig.hprof" ;; esac
  "$work/crunch" -q -f "$w.orig.hprof" "$w.h.bmd" && "$work/decrunch" -q -f "$w.h.bmd" -o "$w.h.hprof"
  "$work/crunch" -q -f --keep-strings "$w.orig.hprof" "$w.k.bmd" && "$work/decrunch" -q -f "$w.k.bmd" -o "$w.k.hprof"
  summary "$w.orig.hprof" "$w.orig.txt"; summary "$w.h.hprof" "$w.h.txt"; summary "$w.k.hprof" "$w.k.txt"
  "$work/unhash" "$w.orig.txt" < "$w.h.txt" | sort > "$w.hn.txt"
  sort "$w.orig.txt" > "$w.os.txt"
  diff "$w.os.txt" "$w.hn.txt" > "$w.diff.h"
  diff "$w.orig.txt" "$w.k.txt" > "$w.diff.k"
  printf '%-45s load: %s / %s / %s  differing lines: defaults %s, --keep-strings %s\n' "$n" \
    "$(grep -m1 '^load [oP]' "$w.orig.txt" | cut -c6-)" "$(grep -m1 '^load [oP]' "$w.h.txt" | cut -c6-)" \
    "$(grep -m1 '^load [oP]' "$w.k.txt" | cut -c6-)" "$(grep -c '^[<>]' "$w.diff.h")" "$(grep -c '^[<>]' "$w.diff.k")"
done
