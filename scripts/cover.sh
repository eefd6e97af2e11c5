#!/usr/bin/env bash
# Test coverage of every package, the commands included: cmd/crunch and
# cmd/decrunch are tested by running their binaries, which the tests build
# with -cover (internal/clitest.Build) and which write their coverage data
# to CLITEST_GOCOVERDIR; this script merges it with the in-process tests'
# profile and prints the total per package.
#   scripts/cover.sh [packages]      (default ./...)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/bin"
CLITEST_GOCOVERDIR="$dir/bin" go test -count=1 -coverpkg=./... -coverprofile="$dir/unit.out" "${@:-./...}" >/dev/null
go tool covdata textfmt -i="$dir/bin" -o "$dir/bin.out"
{ cat "$dir/unit.out"; tail -n +2 "$dir/bin.out"; } >"$dir/all.out"
# A block covered by either run is covered; statements are counted once.
awk 'NR > 1 && $1 != "mode:" {
       stmts[$1] = $2; if ($3 > 0) hit[$1] = 1
     }
     END {
       for (b in stmts) {
         pkg = b; sub(/\/[^\/]*$/, "", pkg)
         total[pkg] += stmts[b]; all += stmts[b]
         if (b in hit) { covered[pkg] += stmts[b]; allc += stmts[b] }
       }
       for (p in total) printf "%-60s %5.1f%%\n", p, 100 * covered[p] / total[p]
       printf "%-60s %5.1f%%\n", "total", 100 * allc / all
     }' "$dir/all.out" | sort
