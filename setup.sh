#!/bin/bash
# Quick start, step 1: install what ustap needs (Debian 12, as root), build
# it in this directory, and run the demo (the dynamic call graph of the
# example program examples/dcg/app.c).
#
#   ./setup.sh              deps + build + demo
#   ./setup.sh --no-demo    deps + build
#   ./setup.sh --deps-only  deps only
#   CONFIGURE_FLAGS=--enable-sanitizers ./setup.sh   build with ASan/UBSan
set -euo pipefail
cd "$(dirname "$0")"

mode=all
case "${1:-}" in
--no-demo) mode=build ;;
--deps-only) mode=deps ;;
"") ;;
*) echo "usage: $0 [--no-demo|--deps-only]" >&2; exit 2 ;;
esac

# Never the systemtap package: our stap must not depend on SystemTap's own.
PACKAGES="build-essential clang-format-14 autoconf automake pkg-config libdw-dev libelf-dev
libzydis-dev dejagnu expect systemtap-doc valgrind clang libclang-rt-14-dev
procps file systemtap-sdt-dev uftrace bpftrace libc6-dbg python3 graphviz"

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

install_deps
[ "$mode" = deps ] && exit 0
build
[ "$mode" = build ] && exit 0
demo
