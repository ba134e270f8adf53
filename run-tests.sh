#!/bin/bash
# Quick start, step 2: build if needed (installing what is missing, as
# setup.sh does) and run the whole test suite (DejaGnu, `make check`).
# Results: testsuite/systemtap.sum (summary) and testsuite/systemtap.log.
# Extra arguments go to runtest, e.g. ./run-tests.sh systemtap.base/print.exp
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh --no-demo
if [ $# -gt 0 ]; then
	exec make check RUNTESTFLAGS="$*"
fi
exec make check
