#!/bin/sh
# Ctrl-C while the dynamic call graph is tracing (systemtap.dcg/faults.exp).
# usage: dcg_ctrlc.sh STAP BIN MECH x|c
# Prints: rc=N lines=N state=S tracer=N code=same|differ|unknown left=N
STAP=$1 BIN=$2 MECH=$3 HOW=$4
dir=$(dirname "$BIN")
cd "$dir" || exit 99
script='probe process("./dcg_calls").function("root") { $dynamic_call_graph = 1 }
probe process("./dcg_calls").function("root").return { $dynamic_call_graph = 0 }'
if [ "$HOW" = x ]; then
	./dcg_calls loop $$ & P=$!
	sleep 0.3
	STAP_DCG_MECHANISM=$MECH "$STAP" -e "$script" -x $P >ctrlc.$$.out 2>ctrlc.$$.err & S=$!
else
	STAP_DCG_MECHANISM=$MECH "$STAP" -e "$script" -c "./dcg_calls loop $$" >ctrlc.$$.out 2>ctrlc.$$.err & S=$!
fi
# wait for the trace to flow
i=0
while [ $i -lt 200 ]; do
	n=$(grep -c -- '->' ctrlc.$$.out 2>/dev/null)
	[ "${n:-0}" -ge 50 ] && break
	sleep 0.1; i=$((i + 1))
done
kill -INT $S
wait $S
rc=$?
lines=$(grep -c -- '->' ctrlc.$$.out 2>/dev/null)
state=none tracer=none code=unknown
if [ "$HOW" = x ]; then
	sleep 0.3
	state=$(sed -n 's/^State:[[:space:]]*\([A-Za-z]\).*/\1/p' /proc/$P/status)
	tracer=$(sed -n 's/^TracerPid:[[:space:]]*//p' /proc/$P/status)
	if command -v python3 >/dev/null; then
		code=$(python3 - "$P" <<'PY'
import sys
pid = sys.argv[1]
exe = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")[0].decode()
import os
real = os.path.realpath("/proc/%s/exe" % pid)
same = True
mem = open("/proc/%s/mem" % pid, "rb")
for line in open("/proc/%s/maps" % pid):
    f = line.split()
    if len(f) < 6 or f[5] != real or "x" not in f[1]:
        continue
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    off = int(f[2], 16)
    mem.seek(lo)
    live = mem.read(hi - lo)
    with open(real, "rb") as fh:
        fh.seek(off)
        disk = fh.read(hi - lo)
    n = min(len(live), len(disk))
    if live[:n] != disk[:n]:
        same = False
print("same" if same else "differ")
PY
)
	fi
	kill -KILL $P 2>/dev/null
	wait $P 2>/dev/null
fi
sleep 0.2
left=$(pgrep -f "^./dcg_calls loop $$\$" | wc -l)
cat ctrlc.$$.err >&2
rm -f ctrlc.$$.out ctrlc.$$.err
echo "rc=$rc lines=$lines state=$state tracer=$tracer code=$code left=$left"
