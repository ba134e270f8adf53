#!/bin/bash
# Benchmark: the dynamic call graph on a call-heavy region (bench/bench-dcg.c),
# as ratios to baselines measured in this run: stops per traced call, time
# per traced call / one bare ptrace stop, the traced region's slowdown, the
# speed of an untraced second thread, and callgrind, uftrace and
# para-callgraph.stp on the same workload. STAP_DCG_MECHANISM is honoured.
#   bench/dcg-bench.sh [CALLS]     (default 20000; fewer for slow mechanisms)
# Env: STAP (default: the in-tree stap), BENCH_DCG_SECONDS (about how long a
# traced region may take, default 2), BENCH_ROUNDS (runs of each, default 2).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
stap=${STAP:-$top/stap}
d=$(cd "$(dirname "$stap")" 2>/dev/null && pwd) && stap=$d/$(basename "$stap")
calls=${1:-${BENCH_DCG_CALLS:-20000}}
budget=${BENCH_DCG_SECONDS:-2}
rounds=${BENCH_ROUNDS:-2}
para=/usr/share/systemtap/examples/general/para-callgraph.stp

if ! [[ $calls =~ ^[0-9]+$ ]] || [ "$calls" -lt 200 ]; then
	echo "usage: $0 [CALLS] (CALLS >= 200)" >&2
	exit 2
fi
if [ ! -x "$stap" ]; then
	echo "dcg-bench: no stap at $stap (build first: make)" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/ustap-bench-dcg.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
cd "$tmp" # gmon.out and the like land here
export XDG_CACHE_HOME=$tmp/cache

prog=$tmp/bench-dcg
${CC:-gcc} -O2 -g -pthread -o "$prog" "$top/bench/bench-dcg.c"
cat >"$tmp/dcg.stp" <<'EOF'
probe process(@1).function("region") { $dynamic_call_graph = 1 }
probe process(@1).function("region").return { $dynamic_call_graph = 0 }
EOF

# value of KEY in a "key value" output file
val() { awk -v k="$1" '$1 == k { print $2; exit }' "$2"; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
# a slowdown: one decimal below 10
times() { awk -v r="$1" 'BEGIN { printf(r < 10 ? "%.1fx" : "%.0fx", r) }'; }
fail() {
	echo "dcg-bench: $1" >&2
	[ -f "$tmp/err" ] && tail -5 "$tmp/err" >&2
	exit 1
}
row() { printf "%-44s %s\n" "$1:" "$2"; }
why() { tail -1 "$tmp/err" | cut -c1-100; }

# the untraced region: the fastest of 300 runs of region(N)
base() {
	"$prog" single "$1" 300 >"$tmp/base" || fail "untraced run failed"
	val region_ns "$tmp/base"
}

# stap -v with the dcg script over "$prog ARGS..."; output in $tmp/out,
# the -v report in $tmp/err, the tree in $tmp/tree
dcg() {
	$pin_cmd "$stap" -v -o "$tmp/tree" "$tmp/dcg.stp" "$prog" -c "$prog $*" \
		>"$tmp/out" 2>"$tmp/err" || fail "stap run failed: $prog $*"
	grep -q '^dynamic call graph: mechanism' "$tmp/err" ||
		fail "no 'dynamic call graph' report from stap -v"
}
report() { sed -n 's/^dynamic call graph: //p' "$tmp/err"; }
# N stops / calls / returns from the report
rep_num() { report | sed -E "s/.* ([0-9]+) $1,.*/\1/"; }

min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a ? b : a) }'; }
# calls of a region of about $budget seconds at $1 ns per call, at most $calls
fit() { awk -v c="$calls" -v b="$budget" -v p="$1" \
	'BEGIN { m = int(b * 1e9 / (p > 0 ? p : 1)); if (m < 200) m = 200; print (m < c ? m : c) }'; }

# calibrate: a short traced region gives the mechanism and its cost per
# call; again with more calls if that allows many more
pin_cmd=""
warm=16 # calls traced first, untimed: the tracer's first-time costs
dcg single 200 1 $warm
mech=$(report | sed -E 's/^mechanism ([^ ,]+).*/\1/')
mech_note=$(report | sed -nE 's/^mechanism [^ ,]+ \((.*)\), [0-9]+ stops.*/\1/p')
est_ns=$(($(val region_ns "$tmp/out") / 200))
n=$(fit "$est_ns")
if [ "$n" -lt "$calls" ] && [ "$n" -ge 2000 ]; then
	dcg single $((n / 4)) 1 $warm
	est_ns=$(($(val region_ns "$tmp/out") / (n / 4)))
	n=$(fit "$est_ns")
fi

# the traced region, each run right after a bare ptrace stop (int3 +
# PTRACE_CONT) and a PTRACE_SINGLESTEP stop are measured: the figures of
# the run with the fastest region, against its own stops (load on the
# machine hits both alike)
traced=""
for ((r = 0; r < rounds; r++)); do
	"$prog" stop 20000 >"$tmp/stop" || fail "bare ptrace stop measurement failed"
	dcg single "$n" 1 $warm
	t=$(val region_ns "$tmp/out")
	if [ -z "$traced" ] || [ "$t" -lt "$traced" ]; then
		traced=$t
		stops=$(rep_num stops)
		ncalls=$(rep_num calls)
		stop_ns=$(val stop_ns "$tmp/stop")
		step_ns=$(val step_ns "$tmp/stop")
	fi
	[ "$(rep_num calls)" -ge "$n" ] || fail "only $(rep_num calls) calls traced, expected $n"
	lines=$(wc -l <"$tmp/tree")
	[ "$lines" -ge $((2 * n)) ] || fail "the tree has $lines lines, expected $((2 * n))"
done
b=$(base "$n")

echo "dcg bench: region() calls a 2-instruction leaf() $n times; best of $rounds runs"
[ "$n" -lt "$calls" ] && echo "  ($calls capped to $n: about $((est_ns / 1000)) us per traced call, ${budget} s budget)"
row "dcg mechanism" "$mech${mech_note:+ ($mech_note)}"
row "bare ptrace stop (int3)" "$(calc %.1f "$stop_ns / 1000") us"
row "bare single-step stop" "$(calc %.1f "$step_ns / 1000") us = $(calc %.1f "$step_ns / $stop_ns") ptrace stops"
# the timed region: n + 1 calls (region() itself); the report counts the
# warm-up calls too
per_call=$(calc %f "($traced - $b) / ($n + 1)")
row "stops per traced call" "$(calc %.2f "$stops / $ncalls")"
row "time per traced call / ptrace stop" "$(calc %.1f "$per_call / $stop_ns")"
row "time per dcg stop / ptrace stop" \
	"$(calc %.1f "$per_call * $ncalls / $stops / $stop_ns")"
row "traced region slowdown" "$(times "$(calc %f "$traced / $b")")"

# The marginal cost of a traced call+return: regions of $m_small and
# $m_big calls (switch-on and switch-off cancel), the best of $rounds
# runs each, for the mechanism (when a big region takes under a minute:
# translate), a native run, callgrind and uftrace (-pg) alike.
m_small=${BENCH_MARGINAL_SMALL:-100000}
m_big=${BENCH_MARGINAL_BIG:-1000000}
# region_ns of "CMD... N" (CMD prints the program's output): best of $rounds
mregion() {
	local n=$1 t b=""
	shift
	for ((r = 0; r < rounds; r++)); do
		"$@" "$n" >"$tmp/mout" 2>"$tmp/err" || return 1
		t=$(val region_ns "$tmp/mout")
		[ -n "$t" ] || return 1
		b=$(min "$b" "$t")
	done
	echo "$b"
}
# marginal ns per call of CMD...
marginal() {
	local a z
	a=$(mregion "$m_small" "$@") && z=$(mregion "$m_big" "$@") || return 1
	calc %.1f "($z - $a) / ($m_big - $m_small)"
}
m_native() { "$prog" single "$1" 1 $warm; }
m_dcg() { "$stap" -o "$tmp/tree" "$tmp/dcg.stp" "$prog" -c "$prog single $1 1 $warm"; }
m_cg() {
	valgrind --tool=callgrind --collect-atstart=no --toggle-collect=region \
		--callgrind-out-file=/dev/null "$prog" single "$1" 1 $warm
}
m_uf() { uftrace record -d "$tmp/uftrace.data" "$prog-pg" single "$1" 1 $warm; }
echo "marginal cost per call+return (regions of $m_small and $m_big calls):"
mn=$(marginal m_native) || fail "untraced runs failed"
row "  native" "$mn ns"
mm=""
if [ "$est_ns" -gt 60000 ]; then # 10^6 calls would take over a minute
	row "  $mech" "skipped: about $((est_ns / 1000)) us per call"
elif mm=$(marginal m_dcg); then
	row "  $mech" "$mm ns = $(times "$(calc %f "$mm / ($mn > 0 ? $mn : 0.1)")") native"
else
	mm=""
	row "  $mech" "skipped: stap failed ($(why))"
fi
# $1 the tracer, $2 its marginal ns: the row, with the mechanism's share
m_row() {
	row "  $1" "$2 ns${mm:+ ($mech: $(calc %.2f "$mm / $2") of it)}"
}
# why callgrind or uftrace cannot run here (nothing: they can); the -pg
# build for uftrace is made once
cg_skip() { command -v valgrind >/dev/null || echo "valgrind not installed"; }
uf_skip() {
	if ! command -v uftrace >/dev/null; then
		echo "uftrace not installed (apt-get install uftrace)"
	elif [ ! -x "$prog-pg" ] &&
		! ${CC:-gcc} -O2 -g -pg -pthread -o "$prog-pg" "$top/bench/bench-dcg.c" 2>"$tmp/err"; then
		echo "no -pg build ($(why))"
	fi
}
if [ -n "$(cg_skip)" ]; then
	row "  callgrind" "skipped: $(cg_skip)"
elif mc=$(marginal m_cg); then
	m_row callgrind "$mc"
else
	row "  callgrind" "skipped: valgrind failed ($(why))"
fi
if [ -n "$(uf_skip)" ]; then
	row "  uftrace (-pg)" "skipped: $(uf_skip)"
elif mu=$(marginal m_uf); then
	m_row "uftrace (-pg)" "$mu"
else
	row "  uftrace (-pg)" "skipped: uftrace record failed ($(why))"
fi

# an untraced second thread: its speed while thread 1 is in the traced
# region against its speed while thread 1 sleeps, in the same run (sleeps
# and traced regions of n/4 calls alternate, 4 of each); the mean of
# $rounds runs
# With BENCH_PIN=1 (the "pinned" rows, when taskset is there and the
# machine has 2 CPUs or more) thread 1 and the tracer share CPU 0 and
# thread 2 has CPU 1: the cost of the mechanism itself to thread 2.
pin_cmd=""
variants="disjoint shared"
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	variants="$variants disjoint,pinned shared,pinned"
fi
for v in $variants; do
	what=${v%,*}
	pin_cmd=""
	export BENCH_PIN=0
	if [ "$v" != "$what" ]; then
		pin_cmd="taskset -c 0"
		export BENCH_PIN=1
	fi
	sum=0
	for ((r = 0; r < rounds; r++)); do
		dcg two "$(((n + 3) / 4))" 4 "$what"
		# only thread 1 is traced: one tid in the tree
		tids=$(grep -oE '\([0-9]+\):' "$tmp/tree" | sort -u | wc -l)
		[ "$tids" -eq 1 ] || echo "note: $what: the tree has lines of $tids threads (expected 1)"
		first=$(val t2_first_per_s "$tmp/out")
		after=$(val t2_after_per_s "$tmp/out")
		[ "$what" = shared ] && awk -v a="$after" -v f="$first" 'BEGIN { exit !(a < 0.3 * f) }' &&
			echo "note: $what: thread 2 at $(calc %.2f "$after / $first") of its speed between traced regions"
		sum=$(calc %f "$sum + $(val t2_region_per_s "$tmp/out") / $(val t2_base_per_s "$tmp/out")")
	done
	label="untraced thread, $what code"
	[ "$v" != "$what" ] && label="$label (pinned)"
	row "$label" "$(calc %.2f "$sum / $rounds") of its speed"
done
pin_cmd=""
export BENCH_PIN=0

# other tracers on the same workload (after the same warm-up): region
# time against the untraced one. best CMD...: the fastest region_ns of
# $rounds runs of CMD (which prints the program's output), in $best
best() {
	best=""
	for ((r = 0; r < rounds; r++)); do
		"$@" >"$tmp/out" 2>"$tmp/err" || return 1
		[ -n "$(val region_ns "$tmp/out")" ] || return 1
		best=$(min "$best" "$(val region_ns "$tmp/out")")
	done
}
nb=$(base "$calls")
if [ -n "$(cg_skip)" ]; then
	row "callgrind region slowdown" "skipped: $(cg_skip)"
elif best valgrind --tool=callgrind --collect-atstart=no --toggle-collect=region \
	--callgrind-out-file=/dev/null "$prog" single "$calls" 1 $warm; then
	row "callgrind region slowdown ($calls calls)" "$(times "$(calc %f "$best / $nb")")"
else
	row "callgrind region slowdown" "skipped: valgrind failed ($(why))"
fi

if [ -n "$(uf_skip)" ]; then
	row "uftrace region slowdown" "skipped: $(uf_skip)"
elif best uftrace record -d "$tmp/uftrace.data" "$prog-pg" single "$calls" 1 $warm; then
	row "uftrace (-pg) region slowdown ($calls calls)" "$(times "$(calc %f "$best / $nb")")"
else
	row "uftrace region slowdown" "skipped: uftrace record failed ($(why))"
fi

# para-callgraph.stp: entry + return probes on every function; its own
# calibration, as its cost per call does not depend on the mechanism
paracg() {
	"$stap" -o /dev/null "$para" "process(\"$prog\").function(\"*\")" \
		"process(\"$prog\").function(\"region\")" -c "$prog single $1 1 $warm"
}
if [ ! -f "$para" ]; then
	row "para-callgraph.stp region slowdown" "skipped: $para missing (apt-get install systemtap-doc)"
elif rounds=1 best paracg 200 && np=$(fit $((best / 200))) && best paracg "$np"; then
	row "para-callgraph.stp region slowdown ($np calls)" \
		"$(times "$(calc %f "$best / $(base "$np")")")"
else
	row "para-callgraph.stp region slowdown" "skipped: stap failed ($(why))"
fi
exit 0
