#!/bin/bash
# Benchmark: the flight recorder under translate, its records read at
# snapshots only (the engine's rings in overwrite mode) against every
# record drained by staprun into its own ring (STAP_DCG_RING_DRAIN=1, as
# before overwrite mode), and an untraced run: the time of a region of
# CALLS calls of a tiny leaf (testsuite/unit-xlate/t-bench.c, its own
# clock; the switch-on, the switch-off and the snapshot in it), the best
# of BENCH_ROUNDS runs each (default 5), as ratios; and the marginal cost
# per call (against a region of CALLS / 10), which leaves those out.
#   bench/dcg-ring-bench.sh [CALLS]   (default 1000000)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
stap=${STAP:-$top/translator/stap}
calls=${1:-1000000}
rounds=${BENCH_ROUNDS:-5}
if ! [[ $calls =~ ^[0-9]+$ ]] || [ "$calls" -lt 1000 ]; then
	echo "usage: $0 [CALLS] (CALLS >= 1000)" >&2
	exit 2
fi
tmp=$(mktemp -d /tmp/ustap-bench-ring.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
${CC:-gcc} -O2 -o t-bench "$top/testsuite/unit-xlate/t-bench.c"
cat >ring.stp <<'STP'
probe begin { dynamic_call_graph_flight_recorder(1000) }
probe process("./t-bench").function("region") { $dynamic_call_graph = 1 }
probe process("./t-bench").function("region").return {
	$dynamic_call_graph = 0
	printf("snapshot %d\n", dynamic_call_graph_snapshot())
}
STP
"$stap" -p4 ring.stp >/dev/null

# ns of region(N) under CMD...: the best of $rounds runs
region() {
	local n=$1 best="" t
	shift
	for ((r = 0; r < rounds; r++)); do
		t=$("$@" "$n" 2>/dev/null | awk '$1 == "region" { print $4 }')
		[ -n "$t" ] || { echo "dcg-ring-bench: no time from: $*" >&2; exit 1; }
		if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
	done
	echo "$best"
}
traced() {
	local drain=$1 n=$2
	env STAP_DCG_MECHANISM=translate STAP_DCG_RING_DRAIN="$drain" "$stap" ring.stp -c "./t-bench $n"
}

tenth=$((calls / 10))
native=$(region "$calls" ./t-bench)
d1=$(region "$tenth" traced 1)
d=$(region "$calls" traced 1)
o1=$(region "$tenth" traced 0)
o=$(region "$calls" traced 0)
echo "flight recorder (1000 records) under translate, a region of $calls calls (best of $rounds);"
echo "per call: the marginal cost, (region of $calls - region of $tenth) / $((calls - tenth)):"
awk -v n="$native" -v d="$d" -v d1="$d1" -v o="$o" -v o1="$o1" -v c="$calls" -v c1="$tenth" 'BEGIN {
	printf "%-32s %10.3f ms\n", "untraced", n / 1e6
	printf "%-32s %10.3f ms  %7.1f ns per call\n", "every record drained (before)", d / 1e6, (d - d1) / (c - c1)
	printf "%-32s %10.3f ms  %7.1f ns per call\n", "overwrite mode (after)", o / 1e6, (o - o1) / (c - c1)
	printf "after / before: region %.2f, per call %.2f\n", o / d, (o - o1) / (d - d1)
}'
