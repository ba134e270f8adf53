#!/bin/bash
# Benchmark: time of passes 1-4 for a one-liner against starting `true`
# (the cost of any process), and a cache hit against a cache miss. Prints
# ms per run and the ratios; everything is measured in this run.
#   STAP=/path/to/stap bash bench/passes.sh [RUNS]
set -euo pipefail
stap=${STAP:?set STAP to the stap to measure}
stap=$(cd "$(dirname "$stap")" && pwd)/$(basename "$stap")
runs=${1:-${BENCH_RUNS:-10}}
cache=$(mktemp -d /tmp/ustap-bench.XXXXXX)
trap 'rm -rf "$cache"' EXIT
export XDG_CACHE_HOME=$cache
# -p4 without the cache leaves the object in the cwd, as SystemTap does
cd "$cache"

now_ns() { date +%s%N; }

# ms per run of "$@", over $runs runs
per_run() {
	local t0 t1
	t0=$(now_ns)
	for ((i = 0; i < runs; i++)); do
		"$@" >/dev/null
	done
	t1=$(now_ns)
	echo $(( (t1 - t0) / runs / 1000 ))
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) b = 1; printf "%.1f", a / b }'; }
ms() { awk -v u="$1" 'BEGIN { printf "%.2f ms", u / 1000 }'; }

script='probe begin { printf("%d\n", 6 * 7); exit() }'

"$stap" -p2 -e "$script" >/dev/null # warm the file cache
base=$(per_run true)
p1=$(per_run "$stap" -p1 -e "$script")
p2=$(per_run "$stap" -p2 -e "$script")
p4=$(per_run "$stap" -p4 --disable-cache -e "$script")

# cache miss: a new script text each run; hit: the same one again
n=0
miss_run() { n=$((n + 1)); "$stap" -p4 -e "probe begin { printf(\"%d\\n\", $n$RANDOM); exit() }"; }
miss=$(per_run miss_run)
"$stap" -p4 -e "$script" >/dev/null
hit=$(per_run "$stap" -p4 -e "$script")

printf "%-32s %12s %10s\n" "what ($runs runs each)" "per run" "ratio"
printf "%-32s %12s %10s\n" "true (baseline)" "$(ms "$base")" "1.0"
printf "%-32s %12s %10s\n" "stap -p1 one-liner" "$(ms "$p1")" "$(ratio "$p1" "$base")x true"
printf "%-32s %12s %10s\n" "stap -p2 one-liner" "$(ms "$p2")" "$(ratio "$p2" "$base")x true"
printf "%-32s %12s %10s\n" "stap -p4 one-liner, no cache" "$(ms "$p4")" "$(ratio "$p4" "$base")x true"
printf "%-32s %12s %10s\n" "stap -p4, cache miss" "$(ms "$miss")" "$(ratio "$miss" "$base")x true"
printf "%-32s %12s %10s\n" "stap -p4, cache hit" "$(ms "$hit")" "$(ratio "$hit" "$base")x true"
echo "cache miss / hit: $(ratio "$miss" "$hit")x"
