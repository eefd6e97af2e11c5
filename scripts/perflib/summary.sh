#!/usr/bin/env bash
# Print perflib's summary of a dump (PerflibSummary.java), built by build.sh in OUT.
#
#   scripts/perflib/summary.sh OUT DUMP [--no-dominators]
set -euo pipefail
out="$1"; shift
exec java -Xmx2g -ea -cp "$(cat "$out/classpath.txt")" PerflibSummary "$@"
