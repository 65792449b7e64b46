#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# An installed tree works wherever it lands: `make install PREFIX= DESTDIR=`,
# then the README's `cc main.c $(pkg-config --cflags --libs dmaconn)`, CMake's
# find_package(dmaconn), and the installed program with its replay component,
# verify helper, man pages and completions.
# Usage: install_test.sh BUILD_DIR   (run from the source root)
set -u
BUILD=$(cd "$1" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/harness.sh"

make -s install BUILD="$BUILD" PREFIX=/opt/dmaconn-test DESTDIR="$TMP/stage" >"$TMP/log" 2>&1 ||
	{ cat "$TMP/log"; bad "make install"; exit 1; }
# Installed under DESTDIR, then moved: nothing may remember either path.
mv "$TMP/stage/opt/dmaconn-test" "$TMP/moved"
P=$TMP/moved
pcdir=$(dirname "$(find "$P" -name dmaconn.pc | head -n 1)")
[ -f "$pcdir/dmaconn.pc" ] && ok "dmaconn.pc installed" || bad "no dmaconn.pc"
if grep -rq "/opt/dmaconn-test\|$TMP/stage\|/usr/local" "$pcdir"; then
	bad ".pc files name an absolute prefix:"; grep -r "prefix=" "$pcdir"
else
	ok ".pc files are relative to \${pcfiledir}"
fi
if [ -f "$BUILD/dmaconn_mpi.pc" ]; then
	[ -f "$pcdir/dmaconn_mpi.pc" ] && ok "dmaconn_mpi.pc installed" || bad "no dmaconn_mpi.pc"
fi

cat >"$TMP/main.c" <<'C'
#include <stdio.h>
#include <dmaconn.h>
int main(void)
{
	dmaconn_result *r;
	if (dmaconn_detect(DMACONN_DEVICE_CUDA, "nvlink", &r) != DMACONN_OK)
		return 1;
	printf("%s %d\n", dmaconn_version_string(), dmaconn_result_size(r));
	dmaconn_result_release(r);
	return 0;
}
C
if command -v pkg-config >/dev/null 2>&1; then
	flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs dmaconn) || bad "pkg-config dmaconn"
	# shellcheck disable=SC2086
	if cc "$TMP/main.c" -o "$TMP/main" $flags -Wl,-rpath,"$pcdir/.." 2>"$TMP/cc"; then
		out=$(DMACONN_REPLAY="$PWD/tests/topologies/h200x2.json" DMACONN_QUIET=1 "$TMP/main")
		[ "$out" = "0.1.0 2" ] && ok "cc main.c \$(pkg-config --cflags --libs dmaconn)" ||
			bad "the pkg-config program printed '$out'"
	else
		cat "$TMP/cc"; bad "cc with pkg-config flags"
	fi
fi

# consumer DIR FIND_PACKAGE_ARGS TARGET OK_TEXT BAD_TEXT: a CMake project in
# DIR (its main.c there) that finds the installed package and links TARGET.
consumer() {
	printf 'cmake_minimum_required(VERSION 3.18)\nproject(consumer C)\nfind_package(%s)\n%s\n%s\n' \
		"$2" "add_executable(main main.c)" "target_link_libraries(main $3)" >"$1/CMakeLists.txt"
	if cmake -S "$1" -B "$1/b" -DCMAKE_PREFIX_PATH="$P" >"$TMP/log" 2>&1 &&
		cmake --build "$1/b" >>"$TMP/log" 2>&1; then
		ok "$4"
	else
		cat "$TMP/log"; bad "$5"
	fi
}
consumer "$TMP" "dmaconn REQUIRED" dmaconn::dmaconn "find_package(dmaconn)" "find_package(dmaconn)"

# dmaconn::dmaconn_mpi brings MPI (its header includes mpi.h): the consumer
# does not look for MPI itself.
if [ -f "$BUILD/dmaconn_mpi.pc" ]; then
	mkdir "$TMP/mpi"
	printf '#include <dmaconn_mpi.h>\nint main(void) { return 0; }\n' >"$TMP/mpi/main.c"
	consumer "$TMP/mpi" "dmaconn REQUIRED COMPONENTS mpi" dmaconn::dmaconn_mpi \
		"find_package(dmaconn COMPONENTS mpi): dmaconn::dmaconn_mpi brings MPI" \
		"dmaconn::dmaconn_mpi without find_package(MPI)"
fi

cli=$P/bin/dmaconn
[ "$("$cli" --version)" = "dmaconn 0.1.0" ] && ok "installed dmaconn runs" || bad "installed dmaconn"
out=$("$cli" --replay tests/topologies/h200x2.json -d cuda -c nvlink -q | head -n 1)
[ "$out" = "cuda/nvlink (replay of tests/topologies/h200x2.json): 2 devices" ] &&
	ok "installed dmaconn finds its replay component" || bad "replay from the installed tree: '$out'"
err=$(DMACONN_CUDA_LIBRARY=/nonexistent/libcuda.so.1 "$cli" --verify 2>&1 >/dev/null)
# The helper ran: it is what reports the missing driver.
case $err in
*"cannot load the CUDA driver (/nonexistent/libcuda.so.1)"*) ok "installed library finds its verify helper" ;;
*) bad "the installed library lacks its helper: $err" ;;
esac
for f in share/man/man1/dmaconn.1 share/man/man3/libdmaconn.3 share/bash-completion/completions/dmaconn \
	share/zsh/vendor-completions/_dmaconn; do
	[ -f "$P/$f" ] && ok "$f" || bad "$f not installed"
done
finish
