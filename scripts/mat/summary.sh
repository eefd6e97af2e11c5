#!/usr/bin/env bash
# Print Eclipse Memory Analyzer's summary of a dump (MatSummary.java), built by build.sh in OUT.
# A .gz or .bz2 dump is decompressed to a temporary file first (MAT reads gzip itself, but the
# summaries of the original and of its round trip should come from the same kind of file).
#
#   scripts/mat/summary.sh OUT DUMP
#
# MAT's strictness defaults to hprofStrictnessStop; -DhprofStrictnessWarning=true in
# MAT_JAVA_OPTS makes it warn and go on instead, as MAT's own command line option does.
set -euo pipefail
out="$1"; dump="$2"
tmp=""
trap '[[ -z "$tmp" ]] || rm -f "$tmp"' EXIT
case "$dump" in
  *.gz) tmp="$(mktemp /tmp/mat-dump-XXXXXX.hprof)"; gzip -dc "$dump" > "$tmp"; dump="$tmp" ;;
  *.bz2) tmp="$(mktemp /tmp/mat-dump-XXXXXX.hprof)"; bzip2 -dc "$dump" > "$tmp"; dump="$tmp" ;;
esac
# java.io.tmpdir: MatSummary's index files go to /tmp/mat-idx-* and are deleted at the end.
java -Xmx2g -Djava.io.tmpdir=/tmp ${MAT_JAVA_OPTS:-} -cp "$(cat "$out/classpath.txt")" MatSummary "$dump"
