#!/bin/bash
# The dynamic call graph against callgrind on real programs: for whole runs
# (from __libc_start_call_main to exit) of Debian programs on fixed inputs,
# the calls of every function in our tree against callgrind's count.
#   bench/dcg-vs-callgrind.sh [-s] [-k] [-v] [PROGRAM...]
#   -s  small inputs (a few seconds per program: the DejaGnu test's size)
#   -k  keep the work directory (printed) for a look at the raw data
#   -v  list every mismatch, not the first few
# PROGRAM: names from the list below (default: all). Env: STAP (default
# the in-tree stap), STAP_DCG_MECHANISM (the mechanism; default auto).
# Per program it prints the functions and calls compared, the mismatches
# (functions whose counts differ) and the first few of them; it exits 1
# if any program mismatched or failed to run.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
stap=${STAP:-$top/stap}
d=$(cd "$(dirname "$stap")" 2>/dev/null && pwd) && stap=$d/$(basename "$stap")
small=0 keep=0 all_mm=0
while getopts skv o; do
	case $o in
	s) small=1 ;;
	k) keep=1 ;;
	v) all_mm=1 ;;
	*)
		sed -n '5,8p' "$0" >&2
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))

# valgrind.bin: Debian's valgrind is a shell wrapper adding variables to
# the environment (LD_LIBRARY_PATH, GLIBCXX_FORCE_NEW) that the native run
# would not have
vg=$(command -v valgrind.bin || command -v valgrind || true)
preload=/usr/libexec/valgrind/vgpreload_core-amd64-linux.so
if [ -z "$vg" ] || [ ! -f "$preload" ]; then
	echo "dcg-vs-callgrind: skipped: valgrind (with $preload) not installed"
	exit 0
fi
if [ ! -x "$stap" ]; then
	echo "dcg-vs-callgrind: no stap at $stap (build first: make)" >&2
	exit 1
fi
# both runs start at libc's __libc_start_call_main, a local symbol: in
# libc's debug file (Debian: libc6-dbg)
# (awk reads it all: leaving early, it would kill ldconfig by SIGPIPE,
# which pipefail makes this script's end)
libc=$(ldconfig -p | awk '$1 == "libc.so.6" && /x86-64/ && !f { f = $NF } END { print f }')
id=$(readelf -n "$libc" 2>/dev/null | sed -n 's/.*Build ID: *//p' | head -1)
if ! { nm "$libc" 2>/dev/null; [ -n "$id" ] && nm "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" 2>/dev/null; } |
	grep -c ' __libc_start_call_main$' >/dev/null; then
	echo "dcg-vs-callgrind: skipped: no symbol for libc's __libc_start_call_main (libc6-dbg not installed)"
	exit 0
fi
tmp=$(mktemp -d /tmp/ustap-dcg-cg.XXXXXX)
if [ $keep = 1 ]; then
	echo "work directory: $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi
trap 'exit 130' INT TERM
mkdir -p "$tmp/in" "$tmp/home"
cd "$tmp"

# ---- inputs: generated, the same on every machine ----
if [ $small = 1 ]; then lines=150; else lines=4000; fi
awk -v n=$lines 'BEGIN {
	split("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu", w, " ")
	x = 7
	for (i = 1; i <= n; i++) {
		s = ""
		for (j = 0; j < 8; j++) { x = (x * 1103515245 + 12345) % 2147483648; s = s w[1 + int(x / 65536) % 12] (j < 7 ? " " : "") }
		printf("%05d %s %d\n", i, s, x % 1000)
	}
}' >"$tmp/in/text"
sed 's/gamma/GAMMA/; 3~7d' "$tmp/in/text" >"$tmp/in/text2"
# a quarter and a tenth of it, for programs making many calls per line
head -n $((lines / 4)) "$tmp/in/text" >"$tmp/in/text4"
head -n $((lines / 10)) "$tmp/in/text" >"$tmp/in/text10"
mkdir -p "$tmp/in/dir/sub"
head -c 20000 "$tmp/in/text" >"$tmp/in/dir/a"
tail -c 5000 "$tmp/in/text" >"$tmp/in/dir/sub/b"
touch -d 2020-01-01 "$tmp/in/dir" "$tmp/in/dir/a" "$tmp/in/dir/sub" "$tmp/in/dir/sub/b"
rows=$((lines / 10))
cat >"$tmp/in/q.sql" <<EOF
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $rows)
INSERT INTO t SELECT i, printf('row %d', i * 7919 % 1000), i % 13 FROM s;
CREATE INDEX tc ON t(c);
SELECT c, count(*), sum(a) FROM t GROUP BY c ORDER BY c;
SELECT b FROM t WHERE c = 5 AND a > 10 ORDER BY b LIMIT 5;
EOF
cat >"$tmp/in/map.cc" <<'EOF'
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
static int check(int v)
{
	if (v % 97 == 0)
		throw std::runtime_error("bad " + std::to_string(v));
	return v;
}
int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 100, bad = 0;
	std::map<std::string, int> m;
	for (int i = 0; i < n; i++) {
		try {
			m["k" + std::to_string(i * 37 % n)] += check(i);
		} catch (const std::exception &e) {
			bad++;
		}
	}
	long s = 0;
	for (const auto &kv : m)
		s += kv.second;
	std::printf("%zu %ld %d\n", m.size(), s, bad);
	return 0;
}
EOF
if [ $# = 0 ] || [[ " $* " == *" c++map "* ]]; then
	g++ -O2 -o "$tmp/in/mapx" "$tmp/in/map.cc"
fi

# ---- the programs: name, executable, arguments (a shell command line) ----
# Inputs sized for up to a few 100000 calls (a minute or so of tracing)
T=$tmp/in/text T4=$tmp/in/text4 T10=$tmp/in/text10
progs=(
	"gzip|/usr/bin/gzip|gzip -9 -n -c $T >/dev/null"
	"bzip2|/usr/bin/bzip2|bzip2 -c $T4 >/dev/null"
	"xz|/usr/bin/xz|xz -T1 -c $T10 >/dev/null"
	"zstd|/usr/bin/zstd|zstd -q --single-thread --no-asyncio -6 -c $T >/dev/null"
	"sed|/usr/bin/sed|sed -E 's/(alpha|beta) ([a-z]+)/\\2-\\1/g; /kappa.*mu/d' $T10 >/dev/null"
	"grep|/usr/bin/grep|grep -c -E 'eta (iota|mu) [a-z]+a\\b' $T"
	"mawk|/usr/bin/mawk|mawk '{ n[\$2]++; s += \$NF } END { for (k in n) c++; print c, s }' $T4"
	"sort|/usr/bin/sort|sort --parallel=1 -k3,3 -k1,1nr $T4 >/dev/null"
	"md5sum|/usr/bin/md5sum|md5sum $T $tmp/in/text2"
	"tr|/usr/bin/tr|tr a-z A-Z <$T >/dev/null"
	"diff|/usr/bin/diff|diff -u $T $tmp/in/text2"
	"tar|/usr/bin/tar|tar -cf - -C $tmp/in --sort=name --owner=0 --group=0 dir >/dev/null"
	"python3|/usr/bin/python3.11|python3.11 -S -E -c 'print(sum(len(l.split()) for l in open(\"$T10\")))'"
	"sqlite3|/usr/bin/sqlite3|sqlite3 :memory: <$tmp/in/q.sql"
	"perl|/usr/bin/perl|perl -e 'my %h; while (<>) { \$h{\$_}++ for /([a-z]+)/g } print join(\",\", map { \"\$_=\$h{\$_}\" } sort keys %h), \"\\n\"' $T10"
	"c++map|$tmp/in/mapx|$tmp/in/mapx $((lines / 4))"
)

# Programs whose calls depend on the heap layout, which valgrind changes:
# their mismatches are shown, not counted in the exit status. CPython's
# counts of its own functions (dict lookups, allocation) change natively
# too when a preloaded constructor mallocs 6000 bytes instead of 16; and
# faulthandler sizes its stack from getauxval(AT_MINSIGSTKSZ), absent
# under valgrind (one sysconf call less there).
layout_dependent=" python3 "

# ---- name normalisation ----
# valgrind's CPU has no AVX-512 and no RTM: glibc's ifuncs pick other
# variants there. A rule per line, each in turn on what the ones before
# made of the name: a pattern on a native variant's name, what to replace
# in it, by what (tab-separated).
cat >"$tmp/cpu.map" <<'EOF'
_rtm$	_rtm$	
^__mem(move|cpy|pcpy)(_chk)?_(avx512|evex)_	_(avx512|evex)_	_avx_
^__w?memset(_chk)?_(avx512|evex)_	_(avx512|evex)_	_avx2_
_evex(_|$)	_evex	_avx2
^__strstr_avx512$	_avx512$	_sse2_unaligned
^__strchr_sse2$	_sse2$	_avx2
EOF
# (the last: __strstr_sse2_unaligned calls __strchr_sse2 where
# __strstr_avx512 calls strchr, that is __strchr_evex)

# Functions left out of the comparison: the program (* for all), an awk
# regular expression on the normalised name, the reason (tab-separated).
q="'"
cat >"$tmp/ignore" <<EOF
*	^__libc_start_call_main \[libc\.so\.6\]\$	the root: both count from inside it
*	( \[linux-vdso\.so\.1\]|^linux-vdso\.so\.1\+0x[0-9a-f]+)\$	valgrind gives the program no vDSO (clock_gettime and the like make the system call there)
*	^time_syscall \[libc\.so\.6\]\$	time() is the vDSO${q}s where there is one, else this
*	^dfs_traversal\.part\.0 \[ld-linux-x86-64\.so\.2\]\$	ld.so sorts the loaded objects at exit: natively the vDSO is one more
*	^\[PLT\] 	a stub outside .plt (.plt.got, .plt.sec, a library${q}s own .plt): callgrind counts a call of the stub and one of the function it jumps to, our tree that function
*	\.cold( \[[^] ]+\])?\$	callgrind counts a jump to the first instruction of X.cold as a call; in our tree X.cold is part of X
grep	^(read|lseek|mmap|munmap) \[libc\.so\.6\]\$	gnulib${q}s c-stack reads /proc/self/maps, longer under valgrind (its own mappings): more reads, seeks and buffers
diff	^(read|lseek|mmap|munmap) \[libc\.so\.6\]\$	the same as grep${q}s
diff	^diff\+0x14f20\$	the same: its parser of /proc/self/maps lines (Debian 12${q}s diff 3.8)
EOF

# What we know of a module (cached in $tmp/mi/BASENAME): its PLT sections
# and function symbols (.dynsym, .symtab and its debug file's).
mkdir -p "$tmp/mi"
cgawk() { awk -v mode="$1" -f "$top/bench/dcg-vs-callgrind.awk" "${@:2}"; }
modinfo() {
	local p=$1 f=$tmp/mi/${1##*/} id dbg=
	[ -f "$f" ] && return 0
	id=$(readelf -n "$p" 2>/dev/null | sed -n 's/.*Build ID: *//p' | head -1)
	[ -n "$id" ] && dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	[ -n "$dbg" ] && [ ! -f "$dbg" ] && dbg=
	{
		readelf -SW "$p" 2>/dev/null | sed -nE \
			's/.* \.plt(\.got|\.sec)? +PROGBITS +([0-9a-f]+) +[0-9a-f]+ +([0-9a-f]+) .*/P \2 \3/p'
		for a in "" -D; do nm -S -C $a "$p" 2>/dev/null; done
		[ -n "$dbg" ] && nm -S -C "$dbg" 2>/dev/null
	} | cgawk mi >"$f"
}

# ---- the two runs ----
# The same environment for both (ld.so's LD_DEBUG=files output gives the
# libraries' bases under valgrind; the native run gets valgrind's preload)
envs="PATH=/usr/bin:/bin LC_ALL=C LANG=C PYTHONHASHSEED=0 PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 LD_BIND_NOW=1 HOME=$tmp/home LD_DEBUG=files"
cat >"$tmp/dcg.stp" <<'EOF'
probe process(@1).library("libc.so.6").function("__libc_start_call_main") {
	$dynamic_call_graph = 1
}
EOF

# "basename path bias size" of the executable and the libraries of a run
# under valgrind ($1: the executable, $2: ld.so's debug output there).
# valgrind loads a PIE executable at 0x108000 and ld.so at 0x4000000,
# the libraries where ld.so's debug output says (the client's come after
# valgrind's launcher's).
modules() {
	local exe=$1 bias=0 interp f b s p
	readelf -h "$exe" | grep -q 'Type: *DYN' && bias=0x108000
	printf '%s\t%s\t%s\t%s\n' "${exe##*/}" "$exe" $bias "$(readelf -lW "$exe" | cgawk size)"
	interp=$(readelf -lW "$exe" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
	if [ -n "$interp" ]; then
		p=$(readlink -f "$interp")
		printf '%s\t%s\t%s\t%s\n' "${p##*/}" "$p" 0x4000000 "$(readelf -lW "$p" | cgawk size)"
	fi
	awk '/file=[^ ]+ \[[0-9]+\];  generating link map/ { f = $0; sub(/.*file=/, "", f); sub(/ .*/, "", f); next }
	f != "" && /base: 0x/ { b = $0; sub(/.*base: /, "", b); split(b, s, / +/); last[f] = s[1] "\t" s[3]; f = "" }
	END { for (f in last) print f "\t" last[f] }' "$2" |
		while IFS=$'\t' read -r f b s; do
			p=$f
			[[ $p == */* ]] || p=$(ldconfig -p | awk -v n="$f" '$1 == n && /x86-64/ { print $NF; exit }')
			[ -n "$p" ] && p=$(readlink -f "$p") && printf '%s\t%s\t%s\t%s\n' "${p##*/}" "$p" "$b" "$s"
		done
}

# ---- per program ----
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf("%.0f s", b - a) }'; }
run() {
	local name=$1 exe=$2 cmd=$3 w=$tmp/$1 t0 t1 t2
	rm -f "$tmp"/cg.ldd.* "$tmp"/us.ldd.*
	t0=$(date +%s.%N)
	sh -c "env -i $envs LD_DEBUG_OUTPUT=$tmp/cg.ldd $vg --tool=callgrind \
		--log-file=$w.vg --show-below-main=yes --zero-before=__libc_start_call_main \
		--run-libc-freeres=no --run-cxx-freeres=no --callgrind-out-file=$w.cg \
		$cmd" >"$w.cg.out" 2>&1 || :
	if [ ! -s "$w.cg" ]; then
		echo "$name: the callgrind run failed: $(tail -1 "$w.vg")"
		return 1
	fi
	t1=$(date +%s.%N)
	"$stap" -o "$w.tree" "$tmp/dcg.stp" "$exe" \
		-c "env -i $envs LD_DEBUG_OUTPUT=$tmp/us.ldd LD_PRELOAD=$preload $cmd" \
		>"$w.us.out" 2>"$w.us.err" || :
	t2=$(date +%s.%N)
	if [ -s "$w.us.err" ] || [ ! -s "$w.tree" ]; then
		echo "$name: the stap run failed: $(tail -1 "$w.us.err")"
		return 1
	fi
	# (stap -c exits 0 whatever the command's status)
	if ! cmp -s "$w.cg.out" "$w.us.out"; then
		echo "$name: the program's output differs between the runs"
		return 1
	fi
	cat "$tmp"/cg.ldd.* >"$w.ldd" 2>/dev/null || :
	modules "$exe" "$w.ldd" >"$w.mods"
	while IFS=$'\t' read -r _ p _ _; do modinfo "$p"; done <"$w.mods"
	cgawk cg -v main="$exe" -v mods="$w.mods" -v mi="$tmp/mi" "$w.cg" >"$w.cg.counts"
	cgawk tree "$w.tree" >"$w.us.counts"
	cgawk cmp -v prog="$name" -v main="$exe" -v mods="$w.mods" -v mi="$tmp/mi" \
		-v cpumap="$tmp/cpu.map" -v ign="$tmp/ignore" -v cgf="$w.cg.counts" \
		-v all_mm=$all_mm -v cgsecs="$(secs "$t0" "$t1")" -v ussecs="$(secs "$t1" "$t2")" \
		"$w.cg.counts" "$w.us.counts" | tee "$w.result"
	if grep -q '^ ' "$w.result" && [[ $layout_dependent == *" $name "* ]]; then
		echo "    ($name: its calls depend on the heap layout: not counted)"
		return 0
	fi
	! grep -q '^ ' "$w.result"
}

status=0
want=" $* "
echo "dcg against callgrind: calls per function over whole runs (mechanism ${STAP_DCG_MECHANISM:-auto})"
for p in "${progs[@]}"; do
	IFS='|' read -r name exe cmd <<<"$p"
	[ $# -gt 0 ] && [[ $want != *" $name "* ]] && continue
	if [ ! -x "$exe" ]; then
		echo "$name: skipped: $exe not installed"
		continue
	fi
	run "$name" "$exe" "$cmd" || status=1
done
echo "ignored, on either side (program, name, reason):"
awk -F'\t' '{ printf("  %s  %s  %s\n", $1, $2, $3) }' "$tmp/ignore"
exit $status
