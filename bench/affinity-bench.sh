#!/bin/bash
# Benchmark: the ptrace engine's CPU affinity (doc/cpu-affinity.md). In one
# run, for an entry probe on a tiny function (CALLS hits) and a breakpoint
# call graph of CALLS calls (bench/bench-affinity.c's region()):
#   off      -D STP_CPU_AFFINITY=0: the engine leaves CPUs alone (the old way)
#   taskset  the same under `taskset -c 0` (stap, staprun and the target)
#   default  the default policy (auto)
# each the best of BENCH_ROUNDS (default 3) runs, as the traced region's
# time (measured by the program) and the whole run's (stap included), and
# their ratios to `off`. Then a program with four busy threads, one calling
# a probed function often: its three untraced threads' throughput under
# the default policy (and off) over an untraced run's, in the same run.
#
# The rows run under `chrt -f 1` where allowed (BENCH_RT=0: not): other
# work on the machine then waits for them, so they see the machine as if
# idle, which is what the figures are about (on an idle virtual machine a
# stop that crosses CPUs wakes a halted virtual CPU); on a loaded machine
# without it, contention hides the effect. The four-thread case runs at
# normal priority (SCHED_FIFO would let two busy threads keep both CPUs).
#   bash bench/affinity-bench.sh [CALLS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
STAP=${STAP:-$top/stap}
calls=${1:-${BENCH_CALLS:-20000}}
rounds=${BENCH_ROUNDS:-3}
out=$(mktemp -d /tmp/ustap-bench-aff.XXXXXX)
trap 'rm -rf "$out"' EXIT
${CC:-gcc} -O2 -g -pthread -o "$out/bench-affinity" "$top/bench/bench-affinity.c" || exit 1
prog=$out/bench-affinity
cat >"$out/probe.stp" <<'EOF'
global n
probe process(@1).function("tiny") { n++ }
EOF
cat >"$out/cg.stp" <<'EOF'
probe process(@1).function("region") { $dynamic_call_graph = 1 }
probe process(@1).function("region").return { $dynamic_call_graph = 0 }
EOF
cat >"$out/hot.stp" <<'EOF'
global n
probe process(@1).function("hot") { n++ }
EOF
export STAP_DCG_MECHANISM=breakpoint
unset STAP_CPU_AFFINITY
for s in probe cg hot; do
	"$STAP" -p4 "$out/$s.stp" "$prog" >/dev/null
done
rt=""
if [ "${BENCH_RT:-1}" != 0 ] && chrt -f 1 true 2>/dev/null; then
	rt="chrt -f 1"
fi
echo "== cpu affinity (bench/bench-affinity.c, $calls events, best of $rounds${rt:+, under $rt})"

# run SCRIPT CONFIG: "region_us wall_us"
run() {
	local pre="" d=""
	case $2 in
	off) d="-D STP_CPU_AFFINITY=0" ;;
	taskset) d="-D STP_CPU_AFFINITY=0" pre="taskset -c 0" ;;
	esac
	local t0 t1 r
	t0=$(date +%s%N)
	# shellcheck disable=SC2086
	r=$($rt $pre "$STAP" $d "$out/$1.stp" "$prog" -o /dev/null -c "$prog calls $calls" |
		awk '/^region_ns/ { print int($2 / 1000) }')
	t1=$(date +%s%N)
	echo "${r:-0} $(((t1 - t0) / 1000))"
}

declare -A reg wall
for ((i = 0; i < rounds; i++)); do
	for s in probe cg; do
		for c in off taskset default; do
			read -r r w < <(run $s $c)
			k=$s-$c
			if [ "$r" -gt 0 ] && { [ -z "${reg[$k]:-}" ] || [ "$r" -lt "${reg[$k]}" ]; }; then
				reg[$k]=$r
			fi
			if [ -z "${wall[$k]:-}" ] || [ "$w" -lt "${wall[$k]}" ]; then
				wall[$k]=$w
			fi
		done
	done
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }'; }
for s in probe cg; do
	case $s in
	probe) what="entry probe, $calls hits" ;;
	cg) what="breakpoint call graph, $calls calls" ;;
	esac
	for c in off taskset default; do
		k=$s-$c
		printf '%-38s %-8s region %8.3f s (%sx faster than off)  whole run %7.3f s (%sx)\n' \
			"$what" "$c" "$(ratio "${reg[$k]:-0}" 1000000)" \
			"$(ratio "${reg[$s-off]:-0}" "${reg[$k]:-0}")" \
			"$(ratio "${wall[$k]}" 1000000)" "$(ratio "${wall[$s-off]}" "${wall[$k]}")"
	done
done

# four busy threads, thread 0 calling hot() every 20 loops (probed)
secs=${BENCH_THREAD_SECONDS:-2}
threads() { # CONFIG: untraced threads' loops per second
	local d=""
	case $1 in
	untraced)
		"$prog" threads "$secs" 20 | awk '/^untraced_per_s/ { print $2 }'
		return
		;;
	off) d="-D STP_CPU_AFFINITY=0" ;;
	esac
	# shellcheck disable=SC2086
	"$STAP" $d "$out/hot.stp" "$prog" -o /dev/null -c "$prog threads $secs 20" |
		awk '/^untraced_per_s/ { print $2 }'
}
declare -A tp
for ((i = 0; i < rounds; i++)); do
	for c in untraced off default; do
		v=$(threads $c)
		tp[$c]="${tp[$c]:-} ${v:-0}"
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
base=$(echo "${tp[untraced]}" | median)
for c in off default; do
	printf 'four busy threads, one probed often:    %-8s untraced threads at %s of their untraced speed\n' \
		"$c" "$(ratio "$(echo "${tp[$c]}" | median)" "$base")"
done
