#!/bin/bash
# Benchmark: the cost of one probe hit under the ptrace engine (entry probe
# with an empty handler, emulated and out of line; entry + return probe)
# as a ratio to one bare ptrace stop measured in the same run. Builds
# bench/bench-ptrace-probe.c against the runtime's engine sources.
#   bash bench/ptrace-probe.sh [CALLS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d /tmp/ustap-bench-ptrace.XXXXXX)
trap 'rm -rf "$out"' EXIT
${CC:-gcc} -O2 -g -I"$top/runtime" -o "$out/bench-ptrace-probe" \
	"$top/bench/bench-ptrace-probe.c" "$top"/runtime/ptrace/ptrace_*.c \
	"$top/runtime/run/sigstate.c" "$top/runtime/lang/debug.c" \
	"$top/runtime/arch/x86_64/insn.c" -lZydis || exit 1
echo "== ptrace probe cost (bench/bench-ptrace-probe.c)"
"$out/bench-ptrace-probe" "${1:-${BENCH_CALLS:-20000}}"
