#!/bin/bash
# Compare the pass 1-2 verdicts of this stap with SystemTap 4.8's (the
# oracle of the developers' guide) over SystemTap's example scripts and
# every script of our testsuite. Not a test: the oracle is never used by
# `make check`. Run from the build tree:
#
#   testsuite/tools/compare-verdicts.sh [-j JOBS] [-o OUT.tsv] [FILE.stp ...]
#
# Each script runs as `stap -p2 [OPTIONS] SCRIPT [ARGS]` from its own
# directory with both translators; OPTIONS and ARGS come from the
# example's .meta "test_check:" line (with -p2 for its -pN) or a
# testsuite file's "#@args:" line. The TSV has a line per script:
#   verdict  ours_rc  oracle_rc  script  first error of ours | of the oracle
# verdict: same, ours-only-ok (we accept what SystemTap rejects), or
# oracle-only-ok (we reject what SystemTap accepts). The summary counts
# them; kernel scripts (ours: "needs the kernel") are counted apart.
set -u
ORACLE=${ORACLE:-/opt/oracle/bin/stap-oracle}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
STAP=${STAP:-$TOP/stap}
JOBS=2
OUT=verdicts.tsv
while getopts "j:o:" o; do
	case $o in
	j) JOBS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ -x "$ORACLE" ] || { echo "no oracle at $ORACLE" >&2; exit 2; }

# one script: print its TSV line
one() {
	local f=$1 dir base opts="" args="" line
	dir=$(dirname "$f")
	base=$(basename "$f")
	local meta=${f%.stp}.meta
	if [ -f "$meta" ] && line=$(grep -m1 '^test_check:' "$meta"); then
		# "stap -p4 [opts] script.stp [args]": keep what is around the name
		line=${line#test_check: }
		line=${line#stap }
		opts=${line%%$base*}
		args=${line#*$base}
		opts=$(echo "$opts" | sed -E 's/(^| )-p ?[0-9]/ /')
	elif line=$(grep -m1 '^#@args:' "$f"); then
		line=${line#\#@args:}
		opts=${line%%--*}
		case $line in *--*) args=${line#*--} ;; esac
	fi
	local o r
	o=$(cd "$dir" && eval "timeout 120 \"$STAP\" -p2 $opts \"$base\" $args" 2>&1 >/dev/null)
	local orc=$?
	r=$(cd "$dir" && eval "timeout 120 \"$ORACLE\" -p2 $opts \"$base\" $args" 2>&1 >/dev/null)
	local rrc=$?
	local v=same
	if [ $orc -eq 0 ] && [ $rrc -ne 0 ]; then v=ours-only-ok; fi
	if [ $orc -ne 0 ] && [ $rrc -eq 0 ]; then v=oracle-only-ok; fi
	if [ $v = oracle-only-ok ] && echo "$o" | grep -q "needs the kernel"; then v=oracle-only-ok-kernel; fi
	local oe re
	oe=$(echo "$o" | grep -m1 -E "error|ERROR" | tr '\t' ' ' | cut -c1-200)
	re=$(echo "$r" | grep -v "Kernel function symbol table missing" | grep -m1 -E "error|ERROR" | tr '\t' ' ' | cut -c1-200)
	printf '%s\t%d\t%d\t%s\t%s | %s\n' "$v" $orc $rrc "$f" "$oe" "$re"
}
export -f one
export STAP ORACLE

if [ $# -eq 0 ]; then
	set -- $(find /usr/share/systemtap/examples -name '*.stp' | sort) \
		$(find "$TOP/testsuite" -name '*.stp' -not -path '*/tools/*' | sort)
fi
printf '%s\n' "$@" | xargs -P "$JOBS" -I{} bash -c 'one "$@"' _ {} > "$OUT"
sort -o "$OUT" -t "$(printf '\t')" -k4 "$OUT"
cut -f1 "$OUT" | sort | uniq -c
