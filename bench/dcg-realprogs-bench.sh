#!/bin/bash
# Benchmark: the dynamic call graph over whole runs of real programs
# (issue 10's whole-run figures): gzip -9 of a fixed 1 MiB file, one
# transaction of 2,000 sqlite3 inserts, a fixed python3.11 script. Each
# program runs traced from libc's __libc_start_call_main (all of main)
# with the tree written to a file (stap -o), and under callgrind; each
# figure is (time on the real input - time on an empty input), so start-up
# (stap's passes, valgrind's own) cancels; the ratio is ours over
# callgrind's (issue 10's target: at most 1/3).
#   bench/dcg-realprogs-bench.sh [PROGRAM...]   (gzip, sqlite3, python3)
# Env: STAP (default: the in-tree stap), STAP_DCG_MECHANISM (default
# auto), BENCH_ROUNDS (the best of that many runs of each, default 2).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
stap=${STAP:-$top/stap}
d=$(cd "$(dirname "$stap")" 2>/dev/null && pwd) && stap=$d/$(basename "$stap")
rounds=${BENCH_ROUNDS:-2}
progs=${*:-gzip sqlite3 python3}

if [ ! -x "$stap" ]; then
	echo "dcg-realprogs-bench: no stap at $stap (build first: make)" >&2
	exit 1
fi
vg=$(command -v valgrind.bin || command -v valgrind || true)
tmp=$(mktemp -d /tmp/ustap-bench-realprogs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
cd "$tmp"
export XDG_CACHE_HOME=$tmp/cache
envs="PATH=/usr/bin:/bin LC_ALL=C LANG=C PYTHONHASHSEED=0 HOME=$tmp"

# ---- inputs: generated, the same on every machine ----
# 1 MiB of text from a fixed linear congruential sequence
awk 'BEGIN {
	split("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu", w, " ")
	x = 7
	while (n < 1048576) {
		x = (x * 1103515245 + 12345) % 2147483648
		s = w[1 + int(x / 65536) % 12] " " (x % 100000) (x % 7 ? " " : "\n")
		printf("%s", s)
		n += length(s)
	}
}' >"$tmp/in.txt"
truncate -s 1048576 "$tmp/in.txt"
: >"$tmp/empty.txt"
{
	echo "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v INTEGER);"
	echo "BEGIN;"
	awk 'BEGIN { for (i = 1; i <= 2000; i++) printf("INSERT INTO t(name, v) VALUES (%cname-%d%c, %d);\n", 39, i * 7919 % 2000, 39, i * 31 % 1000) }'
	echo "COMMIT;"
} >"$tmp/in.sql"
printf 'CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v INTEGER);\nBEGIN;\nCOMMIT;\n' >"$tmp/empty.sql"
cat >"$tmp/in.py" <<'EOF'
d = {}
for i in range(20000):
    d["k%d" % (i * 7919 % 20000)] = i
words = sorted(d, key=lambda k: (d[k] % 97, k))
print(len(words), words[0], words[-1], sum(len(w) for w in words))
EOF
echo 'print(0)' >"$tmp/empty.py"

cat >"$tmp/dcg.stp" <<'EOF'
probe process(@1).library("libc.so.6").function("__libc_start_call_main") {
	$dynamic_call_graph = 1
}
EOF

# "exe|command with IN for the input's stem"
spec() {
	case $1 in
	gzip) echo "/usr/bin/gzip|gzip -9 -c IN.txt" ;;
	sqlite3) echo "/usr/bin/sqlite3|sqlite3 :memory: <IN.sql" ;;
	python3) echo "/usr/bin/python3.11|python3.11 -S -E IN.py" ;;
	*) return 1 ;;
	esac
}

now() { date +%s%N; }
# the best time in ns of $rounds runs of sh -c "$1" (output to $2)
best() {
	local b="" t0 t
	for ((r = 0; r < rounds; r++)); do
		t0=$(now)
		sh -c "$1" >"$2" 2>"$2.err" || return 1
		t=$(($(now) - t0))
		if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
	done
	echo "$b"
}
ms() { awk -v a="$1" 'BEGIN { printf("%.0f ms", a / 1e6) }'; }
row() { printf "%-8s %-34s %s\n" "$1" "$2:" "$3"; }

echo "dcg real-programs bench: whole runs from __libc_start_call_main, (real input - empty input), best of $rounds"
for p in $progs; do
	if ! s=$(spec "$p"); then
		echo "$p: unknown (gzip, sqlite3, python3)" >&2
		exit 2
	fi
	exe=${s%%|*} cmd=${s#*|}
	if [ ! -x "$exe" ]; then
		row "$p" "skipped" "$exe not installed"
		continue
	fi
	real=${cmd//IN/$tmp/in} empty=${cmd//IN/$tmp/empty}
	n0=$(best "env -i $envs $empty" "$tmp/n0") && n1=$(best "env -i $envs $real" "$tmp/n1") ||
		{ row "$p" "skipped" "the native run failed"; continue; }
	# stap: its first run fills the cache of compiled scripts
	us() { echo "$stap -v -o $tmp/tree $tmp/dcg.stp $exe -c 'env -i $envs $1'"; }
	sh -c "$(us "$empty")" >/dev/null 2>&1 || :
	if ! u0=$(best "$(us "$empty")" "$tmp/u0") || ! u1=$(best "$(us "$real")" "$tmp/u1"); then
		row "$p" "skipped" "the stap run failed: $(tail -1 "$tmp/u1.err" 2>/dev/null)"
		continue
	fi
	if ! cmp -s "$tmp/n1" "$tmp/u1"; then
		row "$p" "skipped" "the traced run's output differs from the native one"
		continue
	fi
	calls=$(sed -nE 's/^dynamic call graph: .* ([0-9]+) calls,.*/\1/p' "$tmp/u1.err")
	lines=$(wc -l <"$tmp/tree")
	mech=$(sed -nE 's/^dynamic call graph: mechanism ([^ ,]+).*/\1/p' "$tmp/u1.err")
	row "$p" "native" "$(ms $((n1 - n0)))"
	row "$p" "ustap ($mech, tree to a file)" "$(ms $((u1 - u0))) (${calls:-?} calls, $lines lines)"
	if [ -n "$vg" ] &&
		c0=$(best "env -i $envs $vg --tool=callgrind --callgrind-out-file=/dev/null $empty" "$tmp/c0") &&
		c1=$(best "env -i $envs $vg --tool=callgrind --callgrind-out-file=/dev/null $real" "$tmp/c1"); then
		row "$p" "callgrind" "$(ms $((c1 - c0)))"
		if [ $((u1 - u0)) -le 0 ] || [ $((c1 - c0)) -le 0 ]; then
			# the load moved a run by more than the work: no figure
			row "$p" "ustap / callgrind" "not measured (an empty-input run took longer than the real one)"
		else
			row "$p" "ustap / callgrind" "$(awk -v a=$((u1 - u0)) -v b=$((c1 - c0)) 'BEGIN { printf("%.2f", a / b) }')"
		fi
	else
		row "$p" "callgrind" "skipped (no valgrind, or it failed)"
	fi
done
