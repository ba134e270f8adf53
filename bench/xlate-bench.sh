#!/bin/bash
# Benchmark of the in-process engine (runtime/xlate/, issue 10) on its own,
# through its test driver: the marginal cost of a traced call+return, i.e.
# (region of 10^6 calls - region of 10^5 calls) / 900000, so that the
# switch-on and switch-off cancel, for a 2-instruction leaf; and the same
# for a native run, callgrind and uftrace (-pg) in the same run. Times are
# the program's own (the best of BENCH_ROUNDS runs each, default 5).
#   bench/xlate-bench.sh        (after make; make -C runtime xl-driver)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
drv=$top/runtime/xl-driver
rounds=${BENCH_ROUNDS:-5}
if [ ! -x "$drv" ]; then
	echo "xlate-bench: no $drv (make -C runtime xl-driver)" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/ustap-bench-xlate.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
prog=$tmp/t-bench
${CC:-gcc} -O2 -o "$prog" "$top/testsuite/unit-xlate/t-bench.c"

# ns of region(N) under CMD...: the best of $rounds runs
region() {
	local n=$1 best="" t
	shift
	for ((r = 0; r < rounds; r++)); do
		t=$("$@" "$n" 2>/dev/null | awk '$1 == "region" { print $4 }')
		[ -n "$t" ] || return 1
		if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
	done
	echo "$best"
}
# marginal ns per call under CMD...
marginal() {
	local a b
	a=$(region 100000 "$@") && b=$(region 1000000 "$@") || return 1
	awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", (b - a) / 900000 }'
}
row() { printf "%-40s %s\n" "$1:" "$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

native=$(marginal "$prog")
xl=$(marginal "$drv" -q -f region -- "$prog")
echo "xlate bench: region() calls a 2-instruction leaf(); marginal cost per call+return"
row "native" "$native ns"
row "translate" "$xl ns ($(ratio "$xl" "$native")x native)"
if command -v valgrind >/dev/null &&
	cg=$(marginal valgrind --tool=callgrind --collect-atstart=no --toggle-collect=region \
		--callgrind-out-file=/dev/null "$prog"); then
	row "callgrind" "$cg ns (translate: $(ratio "$xl" "$cg") of it)"
else
	row "callgrind" "skipped (no valgrind, or it failed)"
fi
if command -v uftrace >/dev/null && ${CC:-gcc} -O2 -pg -o "$prog-pg" \
	"$top/testsuite/unit-xlate/t-bench.c" 2>/dev/null &&
	uf=$(marginal uftrace record -d "$tmp/uftrace.data" "$prog-pg"); then
	row "uftrace (-pg)" "$uf ns (translate: $(ratio "$xl" "$uf") of it)"
else
	row "uftrace (-pg)" "skipped (no uftrace, or it failed)"
fi
