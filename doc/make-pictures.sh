#!/bin/bash
# The call graph's pictures in doc/, made from the demo (examples/dcg/app.c):
#   doc/dcg-callgraph.svg   examples/dcg/callgraph_dot.stp, rendered by dot
#   doc/dcg-speedscope.png  examples/dcg/chrome.stp's trace in speedscope
#                           (Debian's headless chromium, puppeteer-core:
#                           testsuite/browser/speedscope-check.js)
#   doc/dcg-flamegraph.png  examples/dcg/flamegraph.stp's folded stacks,
#                           the same way
# Times are the overhead-corrected ones (README: "Times corrected for the
# tracer's overhead").
# Needs a built tree (make), graphviz, chromium, and the npm packages of
# testsuite/browser (installed there by this script if missing).
#   doc/make-pictures.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/ustap-pictures.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for t in dot /usr/bin/chromium node npm; do
	command -v "$t" >/dev/null || {
		echo "make-pictures: $t missing (apt-get install graphviz chromium nodejs npm)" >&2
		exit 1
	}
done
[ -x "$top/stap" ] || { echo "make-pictures: build first (make)" >&2; exit 1; }
if [ ! -d "$top/testsuite/browser/node_modules/speedscope" ]; then
	(cd "$top/testsuite/browser" && npm install --no-audit --no-fund --no-package-lock)
fi
gcc -O2 -g -o "$tmp/app" "$top/examples/dcg/app.c"
cd "$tmp"
"$top/stap" "$top/examples/dcg/callgraph_dot.stp" -c ./app >/dev/null
dot -Tsvg app.dot -o "$top/doc/dcg-callgraph.svg"
"$top/stap" "$top/examples/dcg/chrome.stp" -c ./app >/dev/null
node "$top/testsuite/browser/speedscope-check.js" "$top/testsuite/browser/node_modules" \
	app-trace.json "$top/doc/dcg-speedscope.png" "app (pid " handle_request parse
"$top/stap" "$top/examples/dcg/flamegraph.stp" -c ./app >/dev/null
node "$top/testsuite/browser/speedscope-check.js" "$top/testsuite/browser/node_modules" \
	app.folded "$top/doc/dcg-flamegraph.png" app.folded handle_request parse
echo "make-pictures: doc/dcg-callgraph.svg, doc/dcg-speedscope.png and doc/dcg-flamegraph.png written"
