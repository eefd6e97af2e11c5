#!/usr/bin/env bash
# Round trip every real dump through crunch and decrunch, with
# --keep-strings and with defaults (no name source), and check with a real
# analyzer (VisualVM's heap library, via heapsummary.sh) that the output has
# the same classes, instances, array lengths, references, shallow sizes and
# GC roots by kind as the original. Android outputs also go through
# Debian's hprof-conv.
#
#   scripts/roundtrip.sh [DUMP...]     (default: testdata dumps + ../shared/corpus)
#
# Needs ../shared/tools/heapsummary (skips with a message when absent),
# visualvm and hprof-conv (installed with apt-get when missing).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
hs="$root/../shared/tools/heapsummary/heapsummary.sh"
if [[ ! -x "$hs" ]]; then
  echo "roundtrip: $hs not found; skipping the analyzer round trip"
  exit 0
fi
# Debian installs hprof-conv outside PATH, in the Android SDK folder.
conv="$(command -v hprof-conv || echo /usr/lib/android-sdk/platform-tools/hprof-conv)"
if [[ ! -x "$conv" ]] || [[ ! -d /usr/share/visualvm ]]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --reinstall visualvm hprof-conv >/dev/null
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/crunch" ./cmd/crunch && go build -o "$work/decrunch" ./cmd/decrunch &&
  go build -o "$work/unhash" ./internal/cmd/unhash)

dumps=("$@")
if [[ ${#dumps[@]} -eq 0 ]]; then
  # A file with three heap dumps (classes and objects dumped again), as
  # the old -agentlib:hprof agent wrote one per dump request.
  (cd "$root" && go run ./internal/cmd/multidump "$work/multidump.hprof")
  dumps=("$root"/testdata/*.hprof.gz "$root"/testdata/libuser/*.hprof.gz "$root"/testdata/obfuscated/*.hprof.gz "$root"/testdata/fragment/*.hprof.gz "$root"/testdata/activity/*.hprof.gz "$root"/testdata/watched/*.hprof.gz "$work/multidump.hprof")
  for f in "$root"/../shared/corpus/*; do
    case "$f" in *hprof*|*.bin) [[ -f "$f" ]] && dumps+=("$f") ;; esac
  done
fi

# Known gaps, reported but not failed (none at present).
known_gaps=" "
pass=0; fail=0; gaps=0
for d in "${dumps[@]}"; do
  name="$(basename "$d")"
  orig="$work/orig.hprof"
  case "$d" in
    *.gz) gzip -dc "$d" > "$orig" ;;
    *.bz2) bzip2 -dc "$d" > "$orig" ;;
    *) cp "$d" "$orig" ;;
  esac
  "$work/crunch" -q -f --keep-strings "$orig" "$work/k.bmd"
  "$work/decrunch" -q -f "$work/k.bmd" -o "$work/k.hprof"
  "$work/crunch" -q -f "$orig" "$work/h.bmd"
  "$work/decrunch" -q -f "$work/h.bmd" -o "$work/h.hprof"
  set +e
  "$hs" "$orig" > "$work/a.txt" 2> "$work/a.err"; ea=$?
  "$hs" "$work/k.hprof" > "$work/b.txt" 2> "$work/b.err"; eb=$?
  "$hs" "$work/h.hprof" > "$work/c.txt" 2> "$work/c.err"; ec=$?
  set -e
  # Everything the parser reports must match, shallow sizes included, but
  # the time stamp: with --keep-strings as it is; with defaults and no name
  # source, once every unknown$<hash> placeholder is put back as the name
  # of the original that has that hash (the app's names, which decrunch
  # recovers only from the app's own files).
  norm() { grep -Ev '^timestamp_ms' "$1"; }
  "$work/unhash" "$work/a.txt" < "$work/c.txt" > "$work/cn.txt"
  for v in "k --keep-strings b.txt $eb" "h defaults cn.txt $ec"; do
    set -- $v
    if [[ $ea -ne $4 ]] || ! diff <(norm "$work/a.txt") <(norm "$work/$3") > "$work/diff.txt"; then
      if [[ "$known_gaps" == *" $name "* ]]; then
        echo "KNOWN GAP $name: $2 round trip differs:"; head -20 "$work/diff.txt"; gaps=$((gaps+1)); continue 2
      fi
      echo "FAIL $name: $2 round trip differs (exit $ea vs $4)"; head -20 "$work/diff.txt"; tail -3 "$work/$1.err" 2>/dev/null || true
      fail=$((fail+1)); continue 2
    fi
  done
  if head -c 18 "$orig" | grep -q "1.0.3"; then
    if ! "$conv" "$work/k.hprof" "$work/conv.hprof" > "$work/conv.log" 2>&1; then
      echo "FAIL $name: hprof-conv rejects the output"; cat "$work/conv.log"; fail=$((fail+1)); continue
    fi
    # Android: leaving out the zygote and image heaps must still give a
    # dump that loads, with every remaining object and a consistent graph.
    "$work/crunch" -q -f --drop-heap zygote,image "$orig" "$work/z.bmd"
    "$work/decrunch" -q -f "$work/z.bmd" -o "$work/z.hprof"
    if ! "$hs" --brief "$work/z.hprof" > "$work/z.txt" 2> "$work/z.err"; then
      echo "FAIL $name: --drop-heap output does not load"; tail -3 "$work/z.err"; fail=$((fail+1)); continue
    fi
    if ! "$conv" "$work/z.hprof" "$work/zconv.hprof" > "$work/conv.log" 2>&1; then
      echo "FAIL $name: hprof-conv rejects the --drop-heap output"; cat "$work/conv.log"; fail=$((fail+1)); continue
    fi
  fi
  echo "ok   $name ($(grep '^instances:' "$work/a.txt"), $(grep '^gc_roots:' "$work/a.txt"))"
  pass=$((pass+1))
done
# BMD version 1 as the original 2014 cruncher wrote it (testdata/v1, made
# from the corpus dialer dump): decrunched with only the built-in names, it
# must give every object of the original, and the class dumps among them
# that VisualVM counts as instances of java.lang.Class.
v1="$root/testdata/v1/dialer-orig.bmd.gz"
dialer="$root/../shared/corpus/android-dalvik-kitkat-dialer.android-hprof"
if [[ -f "$v1" && -f "$dialer" ]]; then
  cp "$dialer" "$work/orig.hprof"
  "$work/decrunch" -q -f "$v1" -o "$work/v1.hprof"
  "$hs" "$work/orig.hprof" > "$work/a.txt" 2> "$work/a.err"
  if ! "$hs" "$work/v1.hprof" > "$work/b.txt" 2> "$work/b.err"; then
    echo "FAIL dialer-orig.bmd (version 1): VisualVM does not load the output"; tail -3 "$work/b.err"; fail=$((fail+1))
  else
    ok=1
    for key in '^instances:' '^instances.plain:' '^instances.object_arrays:' '^instances.primitive_arrays:' '^classes:' '^class java.lang.Class '; do
      va=$(grep -E "$key" "$work/a.txt" | sed -E 's/ shallow=[0-9]+//' | head -1); vb=$(grep -E "$key" "$work/b.txt" | sed -E 's/ shallow=[0-9]+//' | head -1)
      va=${va%% refs=*}; vb=${vb%% refs=*}
      if [[ "$va" != "$vb" ]]; then echo "FAIL dialer-orig.bmd (version 1): '$va' vs '$vb'"; ok=0; fi
    done
    if [[ $ok == 1 ]]; then echo "ok   dialer-orig.bmd (version 1, the original tool's file: $(grep '^instances:' "$work/b.txt"), $(grep '^class java.lang.Class ' "$work/b.txt" | cut -d' ' -f2-4))"; pass=$((pass+1)); else fail=$((fail+1)); fi
  fi
fi
echo "roundtrip: $pass passed, $fail failed, $gaps known gaps"
[[ $fail -eq 0 ]]
