#!/bin/bash
# Quick start, step 1: install what ustap needs (Debian 12, as root), build
# it in this directory, and run the demo (the dynamic call graph of the
# example program examples/dcg/app.c).
#
#   ./setup.sh              deps + build + demo
#   ./setup.sh --no-demo    deps + build
#   ./setup.sh --deps-only  deps only
#   ./setup.sh --browser-deps  what the browser test needs (chromium, node,
#                           npm, testsuite/browser's npm packages); .ci/run
#   CONFIGURE_FLAGS=--enable-sanitizers ./setup.sh   build with ASan/UBSan
set -euo pipefail
cd "$(dirname "$0")"

mode=all
case "${1:-}" in
--no-demo) mode=build ;;
--deps-only) mode=deps ;;
--browser-deps) mode=browser ;;
"") ;;
*) echo "usage: $0 [--no-demo|--deps-only|--browser-deps]" >&2; exit 2 ;;
esac

# Never the systemtap package: our stap must not depend on SystemTap's own.
PACKAGES="build-essential clang-format-14 autoconf automake pkg-config libdw-dev libelf-dev
libzydis-dev dejagnu expect systemtap-doc valgrind clang libclang-rt-14-dev
procps file systemtap-sdt-dev uftrace bpftrace libc6-dbg python3 graphviz php8.2-cli
xz-utils debuginfod curl"

install_deps() {
	local missing=""
	for p in $PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "setup.sh: missing packages:$missing" >&2
		echo "setup.sh: run as root, or: sudo apt-get install$missing" >&2
		exit 1
	fi
	echo "setup.sh: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends $missing
}

# systemtap.dcg/browser.exp (STAP_BROWSER_TEST=1): Debian's chromium, and
# node and npm only where missing (a node from elsewhere, e.g. NodeSource,
# brings its own npm and conflicts with Debian's npm package), then the
# npm packages of testsuite/browser/package.json.
browser_deps() {
	local missing=""
	[ -x /usr/bin/chromium ] || missing="$missing chromium"
	command -v node >/dev/null || missing="$missing nodejs"
	command -v npm >/dev/null || missing="$missing npm"
	if [ -n "$missing" ]; then
		echo "setup.sh: installing$missing"
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -q --no-install-recommends $missing
	fi
	(cd testsuite/browser && npm install --no-audit --no-fund --no-package-lock)
}

build() {
	[ -x configure ] || ./autogen.sh
	[ -f Makefile ] || ./configure ${CONFIGURE_FLAGS:-}
	make -j"$(nproc)"
}

# The dynamic call graph of the bundled example program: every call and
# return under handle_request() (examples/dcg/calltree.stp).
demo() {
	echo
	echo "== demo: gcc -O2 -g -o examples/dcg/app examples/dcg/app.c"
	gcc -O2 -g -o examples/dcg/app examples/dcg/app.c
	echo "== demo: cd examples/dcg && ../../stap calltree.stp -c ./app"
	(cd examples/dcg && ../../stap calltree.stp -c ./app)
}

if [ "$mode" = browser ]; then
	browser_deps
	exit 0
fi
install_deps
[ "$mode" = deps ] && exit 0
build
[ "$mode" = build ] && exit 0
demo
