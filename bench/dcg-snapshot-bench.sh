#!/bin/bash
# Benchmark: a snapshot of a running translated thread (the flight
# recorder under translate, a timer probe's dynamic_call_graph_snapshot_all()
# every 5 ms while testsuite/systemtap.dcg/dcg_ringdeep.c calls a leaf
# CALLS times under 13 open frames): the thread stopped for the read and
# its stack unwound (after) against it read as it runs
# (STAP_DCG_SNAPSHOT_NOSTOP=1, before: the frames entered in the gap
# missing). The time is the script's own (gettimeofday_ns around the
# call), the mean per snapshot, the best of BENCH_ROUNDS runs (default 3).
#   bench/dcg-snapshot-bench.sh [CALLS]   (default 30000000)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
stap=${STAP:-$top/translator/stap}
calls=${1:-30000000}
rounds=${BENCH_ROUNDS:-3}
if ! [[ $calls =~ ^[0-9]+$ ]] || [ "$calls" -lt 1000000 ]; then
	echo "usage: $0 [CALLS] (CALLS >= 1000000)" >&2
	exit 2
fi
tmp=$(mktemp -d /tmp/ustap-bench-snap.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
${CC:-gcc} -O2 -o dcg_ringdeep "$top/testsuite/systemtap.dcg/dcg_ringdeep.c"
cat >snap.stp <<'STP'
global n, ns
probe begin { dynamic_call_graph_flight_recorder(20) }
probe process("./dcg_ringdeep").function("region") { $dynamic_call_graph = 1 }
probe process("./dcg_ringdeep").function("region").return { $dynamic_call_graph = 0 }
probe timer.ms(5) {
	t = gettimeofday_ns()
	k = dynamic_call_graph_snapshot_all()
	if (k > 0) { ns += gettimeofday_ns() - t; n++ }
}
probe end { if (n) printf("snapshots %d mean %d\n", n, ns / n) }
STP
"$stap" -p4 snap.stp >/dev/null

# mean ns per snapshot (of records) under env VAR=VALUE: the best of $rounds
snap() {
	local best="" t
	for ((r = 0; r < rounds; r++)); do
		t=$(env STAP_DCG_MECHANISM=translate "$1" "$stap" snap.stp -c "./dcg_ringdeep $calls" \
			2>/dev/null | awk '$1 == "snapshots" { print $4 }' | tail -1)
		[ -n "$t" ] || { echo "dcg-snapshot-bench: no time ($1)" >&2; exit 1; }
		if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
	done
	echo "$best"
}
before=$(snap STAP_DCG_SNAPSHOT_NOSTOP=1)
after=$(snap STAP_DCG_SNAPSHOT_NOSTOP=0)
echo "a snapshot of a running translated thread (flight recorder of 20, 13 frames open; best of $rounds):"
awk -v b="$before" -v a="$after" 'BEGIN {
	printf "%-44s %8.1f us\n", "read as it runs (before)", b / 1e3
	printf "%-44s %8.1f us\n", "stopped, unwound, resumed (after)", a / 1e3
	printf "after / before: %.2f (+%.1f us per running thread)\n", a / b, (a - b) / 1e3
}'
