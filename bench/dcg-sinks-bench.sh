#!/bin/bash
# Benchmark: the call graph's output formats alone, as ratios to the tree
# measured in this run: a million records (a root, N small calls, a mid()
# every 1000, as systemtap.dcg/scale.exp traces) given to each format
# through the sinks' layer by bench/bench-dcg-sinks.c and written to a
# file; the time per record against the tree's, the bytes written, and
# the peak RSS (the formats never keep the records).
#   bench/dcg-sinks-bench.sh [CALLS]   (default 500000: ~1M records)
# Env: BENCH_ROUNDS (runs of each, the fastest kept; default 3).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
calls=${1:-500000}
rounds=${BENCH_ROUNDS:-3}
if ! [[ $calls =~ ^[0-9]+$ ]] || [ "$calls" -lt 1000 ]; then
	echo "usage: $0 [CALLS] (CALLS >= 1000)" >&2
	exit 2
fi
tmp=$(mktemp -d /tmp/ustap-bench-sinks.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
r=$top/runtime/dcg
${CC:-gcc} -O2 -g -I"$top/runtime" -o "$tmp/bench-dcg-sinks" "$top/bench/bench-dcg-sinks.c" \
	"$r/sink_run.c" "$r/sink_out.c" "$r/sink_ring.c" "$r/sink_paths.c" "$r/sink_chrome.c" \
	"$r/sink_folded.c" "$r/sink_report.c" "$r/sink_dot.c" "$r/sink_tree.c" "$r/sink_spool.c"

# the fastest of $rounds runs: "ns_per_record bytes rss_kb records"
run() {
	local best="" line
	for _ in $(seq "$rounds"); do
		line=$(BENCH_FORMAT=$1 "$tmp/bench-dcg-sinks" "$calls" "$tmp") ||
			{ echo "dcg-sinks-bench: $1 failed" >&2; exit 1; }
		rm -f "$tmp/out.$1"
		line=$(awk '{ print $3, $5, $7, $9 }' <<<"$line")
		if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
			best=$line
		fi
	done
	echo "$best"
}

read -r tree_ns tree_bytes tree_rss records <<<"$(run tree)"
echo "dcg output formats, $records records each, written to a file (fastest of $rounds):"
printf "%-8s %-28s %14s %12s\n" format "time per record / tree's" bytes "peak RSS"
for f in tree chrome folded report graph dot; do
	if [ "$f" = tree ]; then
		ns=$tree_ns bytes=$tree_bytes rss=$tree_rss
	else
		read -r ns bytes rss _ <<<"$(run $f)"
	fi
	printf "%-8s %-28s %14s %9s KiB\n" "$f" \
		"$(awk -v a="$ns" -v b="$tree_ns" 'BEGIN { printf "%.2f (%.0f ns)", a / b, a }')" \
		"$bytes" "$rss"
done
