#!/bin/sh
# Ctrl-C while the call graph writes a chrome trace with frames open
# (systemtap.dcg/formats.exp): tracing is switched on at spin() and never
# off. usage: dcg_formats_int.sh STAP DIR; prints rc=N (stap's status).
STAP=$1
cd "$2" || exit 99
rm -f int.json
"$STAP" -D STP_DCG_FORMAT=chrome -D STP_DCG_OUTPUT=int.json \
	-e 'probe process("./dcg_formats").function("spin") { $dynamic_call_graph = 1 }' \
	-c './dcg_formats spin' >int.out 2>int.err &
S=$!
# wait for the trace to flow (the file's first buffer written)
i=0
while [ $i -lt 300 ] && [ ! -s int.json ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -INT $S
wait $S
echo "rc=$?"
