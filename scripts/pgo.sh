#!/usr/bin/env bash
# Profile-guided optimization: writes cmd/crunch/default.pgo and
# cmd/decrunch/default.pgo, the CPU profiles that `go build` of the two
# commands uses (-pgo=auto, Go 1.21 on: hot calls inlined, hot code laid out
# first):
#
#   scripts/pgo.sh DUMP.hprof...
#   TOOLS=crunch scripts/pgo.sh DUMP.hprof...   (one tool's profile only)
#
# The committed profiles were made from three dumps, a 4-byte-ID one and a
# JDK 17 one with 8-byte IDs, the README's "134 MB dump" and big-200m.hprof,
# and, since 2026-12-05 (the twenty-fifth session), the Android-shaped dump
# of 134 MB, whose roots, heap infos and 4 KiB records take paths the
# others do not:
#   scripts/install-jdk32.sh && ID32=1 scripts/gendump.sh Big big134.hprof 134
#   scripts/genbig.sh
#   go run ./internal/cmd/scaleheap -n 55 ../shared/corpus/android-dalvik-kitkat-dialer.android-hprof dialer55.hprof
# Made so (the best of four makings for crunch, of three for decrunch)
# against the profiles of 2026-12-04, crunch with GOMAXPROCS=1 ran 1.50 %
# fewer instructions on big134, 1.34 % on big-200m.hprof and 2.29 % on the
# Android-shaped dump, split by spans 0.08 % and 1.76 % (big134, Android);
# decrunch with one goroutine 5.9 %, 6.2 % and 6.2 % fewer, with two
# (HEAPCRUNCH_PIPELINE=on, least of three runs) 1.8 % on big134. The
# outputs were the same byte for byte.
# Each dump is crunched (BenchmarkCrunch) and its BMD decrunched
# (BenchmarkDecrunch) with two cores and with GOMAXPROCS=1, and each tool's
# profiles merged. Regenerate them when the hot code changes much; a stale
# profile is only less useful, never wrong.
# Measured (valgrind --tool=cachegrind, GOMAXPROCS=1): crunch on big134 ran
# 5.7 % fewer instructions with its profile at 9f8cf98; with the profiles
# this script made after e53d4b5 (GOGC=off), crunch 1.8 % fewer than with
# the profile made before (3.370 G against 3.432 G), and decrunch, which had
# none, 4.8 % fewer on big-200m.hprof's BMD (2.584 G against 2.714 G) and
# 5.1 % on big134's (2.326 G against 2.450 G); at 9f8cf98 decrunch's gain
# was 1.2 %, and it was left without. Profiles are samples: two makings
# differ by up to 2 % in what they save, and after much new hot code by
# more: on 2026-11-27 (0b5e8fd) two makings of crunch's gave 2,479.5 M and
# 2,386.5 M instructions with GOMAXPROCS=1 (2,473.2 M with the profile
# before), and the second was kept, also 3.5 to 3.8 % fewer on
# big-200m.hprof and with two goroutines: make two or three and keep the
# best, measured with scripts/instructions.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(($#)) || { echo "usage: scripts/pgo.sh DUMP.hprof..." >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$root"
for tool in ${TOOLS:-crunch decrunch}; do
  go test -c -o "$work/$tool.test" "./$tool"
  bench=BenchmarkCrunch
  [[ $tool == decrunch ]] && bench=BenchmarkDecrunch
  # The ways each dump is run: GOMAXPROCS, then HEAPCRUNCH_PIPELINE and
  # HEAPCRUNCH_SPLIT. With two cores each way is forced, whatever the
  # VM's cores measure (internal/cores), so that all are in the profile:
  # crunch's pass 2 split by spans (its way with two free cores) and on
  # two goroutines in a pipeline (its way where spans cannot be).
  ways="1:off:off 2:on:off"
  [[ $tool == crunch ]] && ways="1:off:off 2:off:on 2:on:off"
  n=0
  for dump in "$@"; do
    for way in $ways; do
      IFS=: read -r procs pipeline split <<<"$way"
      n=$((n + 1))
      (cd "$tool" && GOMAXPROCS=$procs HEAPCRUNCH_PIPELINE=$pipeline HEAPCRUNCH_SPLIT=$split HEAPCRUNCH_BENCH_DUMP="$dump" "$work/$tool.test" \
        -test.run '^$' -test.bench "^$bench\$" -test.benchtime 6x -test.cpuprofile "$work/$tool.$n.prof" >/dev/null)
    done
  done
  go tool pprof -proto "$work/$tool".*.prof >"cmd/$tool/default.pgo" 2>/dev/null
  echo "cmd/$tool/default.pgo: $(stat -c %s "cmd/$tool/default.pgo") bytes from $n profiles"
done
