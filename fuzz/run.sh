#!/bin/bash
# Run the passes 1-2 fuzzer: fuzz/run.sh HARNESS SECONDS
# Corpus: fuzz-out/corpus (seeded from fuzz/seeds, the test scripts and the
# examples); crashes: fuzz-out/crashes/. Each crash should become a parseko/
# or semko/ test once fixed.
set -uo pipefail
bin=$1
secs=${2:-60}
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
out=fuzz-out
mkdir -p "$out/corpus" "$out/crashes"

# Seeds: the .stp files of fuzz/seeds, examples/ and the translator tests.
seeddir="$out/seeds"
rm -rf "$seeddir"
mkdir -p "$seeddir"
for d in "$here/seeds" "$top/examples" "$top"/testsuite/{parseok,parseko,semok,semko,systemtap.base}; do
	[ -d "$d" ] || continue
	for f in "$d"/*.stp; do
		[ -f "$f" ] && cp "$f" "$seeddir/$(basename "$d")-$(basename "$f")"
	done
done

jobs=$(( $(nproc) > 1 ? $(nproc) / 2 : 1 ))
echo "fuzzing passes 1-2 for $secs s with $jobs jobs; corpus $out/corpus"
"$bin" -fork="$jobs" -ignore_ooms=1 -ignore_timeouts=0 -ignore_crashes=1 \
	-rss_limit_mb=4096 -detect_leaks=0 -timeout=10 -max_len=4096 \
	-max_total_time="$secs" -close_fd_mask=3 \
	-dict="$here/stap.dict" -artifact_prefix="$out/crashes/" \
	"$out/corpus" "$seeddir" 2>&1 | tail -20
n=$(find "$out/crashes" -type f | wc -l)
echo "fuzz: $n crash/timeout artifacts in $out/crashes"
[ "$n" -eq 0 ]
