#!/usr/bin/env bash
# Round trip dumps through crunch and decrunch and compare Eclipse Memory Analyzer's summaries
# (MatSummary.java) of the original and of the restored dumps: (a) crunch with defaults and
# decrunch with no name source, each unknown$<hash> then matched to the original's name
# (internal/cmd/unhash); (b) crunch --keep-strings. Prints one line per dump; the summaries and
# diffs stay in the work folder (/tmp/mat-rt-*).
#
# MAT reads HPROF 1.0.1 and 1.0.2 only: it refuses Android's JAVA PROFILE 1.0.3
# (AbstractParser.readVersion). For such a dump the line gives MAT's answer to the original and
# the restored files as they are, and the comparison is made on the three files converted by
# hprof-conv (Debian's hprof-conv package), as MAT's users are told to do.
#
#   scripts/mat/roundtrip.sh OUT [DUMP...]   (OUT from build.sh; default dumps: as
#                                             scripts/perflib/roundtrip.sh)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$(cd "$1" && pwd)"; shift
work="$(mktemp -d /tmp/mat-rt-XXXXXX)"
bin=/tmp/mat-bin
echo "mat roundtrip: work folder $work"
(cd "$root" && go build -o "$bin/" ./cmd/crunch ./cmd/decrunch ./internal/cmd/unhash) || exit 1
conv=/usr/lib/android-sdk/platform-tools/hprof-conv
dumps=("$@")
if [[ ${#dumps[@]} -eq 0 ]]; then
  dumps=("$root"/testdata/*.hprof.gz "$root"/testdata/libuser/*.hprof.gz)
  for f in "$root"/../shared/corpus/*; do case "$f" in *hprof*|*.bin) dumps+=("$f") ;; esac; done
fi
summary() { "$root/scripts/mat/summary.sh" "$out" "$1" > "$2" 2> "$2.err"; }
loadline() { grep -m1 '^load ' "$1" | cut -c6- | cut -c1-100; }
for d in "${dumps[@]}"; do
  n=$(basename "$d"); n=${n%.gz}; n=${n%.bz2}; w="$work/$n"
  case "$d" in *.gz) gzip -dc "$d" > "$w.orig.hprof" ;; *.bz2) bzip2 -dc "$d" > "$w.orig.hprof" ;; *) cp "$d" "$w.orig.hprof" ;; esac
  "$bin/crunch" -q -f "$w.orig.hprof" "$w.h.bmd" && "$bin/decrunch" -q -f "$w.h.bmd" -o "$w.h.hprof"
  "$bin/crunch" -q -f --keep-strings "$w.orig.hprof" "$w.k.bmd" && "$bin/decrunch" -q -f "$w.k.bmd" -o "$w.k.hprof"
  note=""
  if [[ "$(head -c 18 "$w.orig.hprof")" == "JAVA PROFILE 1.0.3" ]]; then
    summary "$w.orig.hprof" "$w.orig.raw.txt"; summary "$w.h.hprof" "$w.h.raw.txt"
    note="1.0.3: MAT: $(loadline "$w.orig.raw.txt") / $(loadline "$w.h.raw.txt"); via hprof-conv: "
    for v in orig h k; do
      "$conv" "$w.$v.hprof" "$w.$v.conv.hprof" > /dev/null 2>&1 || note="$note(hprof-conv failed on $v) "
      mv "$w.$v.conv.hprof" "$w.$v.hprof" 2> /dev/null
    done
  fi
  summary "$w.orig.hprof" "$w.orig.txt"; summary "$w.h.hprof" "$w.h.txt"; summary "$w.k.hprof" "$w.k.txt"
  "$bin/unhash" "$w.orig.txt" < "$w.h.txt" | sort > "$w.hn.txt"
  sort "$w.orig.txt" > "$w.os.txt"
  diff "$w.os.txt" "$w.hn.txt" > "$w.diff.h"
  diff "$w.orig.txt" "$w.k.txt" > "$w.diff.k"
  verdict() { # which kinds of lines (first words) differ
    local c; c=$(grep -c '^[<>]' "$1")
    if [[ $c -eq 0 ]]; then echo identical; else
      echo "$c lines differ ($(grep '^[<>]' "$1" | cut -c3- | cut -d' ' -f1 | sort | uniq -c | awk '{printf "%s%s %s", s, $2, $1; s=", "}'))"
    fi
  }
  printf '%-45s %sload: %s / %s / %s  defaults: %s; --keep-strings: %s\n' "$n" "$note" \
    "$(loadline "$w.orig.txt")" "$(loadline "$w.h.txt")" "$(loadline "$w.k.txt")" \
    "$(verdict "$w.diff.h")" "$(verdict "$w.diff.k")"
done
