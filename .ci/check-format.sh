#!/bin/bash
# The C sources of the translator, runtime, benchmarks, fuzzers and unit
# tests are formatted with .clang-format by Debian 12's clang-format-14
# (pinned: other versions format some constructs differently). Test
# programs under testsuite/systemtap.*/ and the DWARF/ptrace fixtures are
# left as written: their tests probe them by line.
#   .ci/check-format.sh        list the files that differ; non-zero if any
#   .ci/check-format.sh --fix  format them in place
set -uo pipefail
cd "$(dirname "$0")/.."
cf=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$cf" >/dev/null; then
	echo "check-format: $cf not found (apt-get install clang-format-14)" >&2
	exit 2
fi
fix=0
[ "${1:-}" = --fix ] && fix=1
bad=0
while IFS= read -r f; do
	if [ $fix = 1 ]; then
		"$cf" --style=file -i "$f"
	elif ! "$cf" --style=file "$f" | cmp -s - "$f"; then
		echo "not formatted: $f"
		bad=$((bad + 1))
	fi
done < <(git ls-files 'translator/*.[ch]' 'runtime/*.[ch]' 'bench/*.[ch]' 'fuzz/*.[ch]' \
	'testsuite/unit/*.[ch]')
[ $bad = 0 ] || echo "check-format: $bad file(s) differ from .clang-format; run .ci/check-format.sh --fix"
[ $bad = 0 ]
