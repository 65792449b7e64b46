#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A component dmaconn opens beside itself (libdmaconn_replay.so.0 beside
# libdmaconn.so.0, libdmaconn_mpi.so.0 for --mpi) that is there but needs a
# library that is not (libjansson.so.4 where Jansson is not installed): the
# error names the missing library and the copy that needs it, not the
# component as if it were absent.  The stand-in components need
# libdctest-missing.so.4, which is deleted once they are linked.
# usage: sibling_load_test.sh DMACONN_CLI LIBDMACONN REPLAY_FILE CC
set -u
cli=$1 lib=$2 replay=$3 cc=$4
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/dep" "$tmp/lib"
echo 'int dc_test_missing(void) { return 1; }' >"$tmp/dep.c"
printf 'extern int dc_test_missing(void);\nint dc_test_needs(void) { return dc_test_missing(); }\n' >"$tmp/c.c"
"$cc" -shared -fPIC -Wl,-soname,libdctest-missing.so.4 "$tmp/dep.c" -o "$tmp/dep/libdctest-missing.so.4" || exit 1
for so in libdmaconn_replay.so.0 libdmaconn_mpi.so.0; do
	"$cc" -shared -fPIC -Wl,-soname,$so "$tmp/c.c" "$tmp/dep/libdctest-missing.so.4" -o "$tmp/lib/$so" || exit 1
done
rm "$tmp/dep/libdctest-missing.so.4"
# The program finds the copied library through its $ORIGIN run path.
cp "$cli" "$tmp/lib/dmaconn" && cp "$lib" "$tmp/lib/libdmaconn.so.0" || exit 1
. "$(dirname "$0")/harness.sh"
check() { # name, exit status, output
	case $3 in
	*"$tmp/lib/$1 cannot be loaded: libdctest-missing.so.4: cannot open shared object file"*)
		ok "$1: $3" ;;
	*)
		bad "$1 (exit $2) does not name the copy and the library it misses: $3" ;;
	esac
	case $3 in
	*"$1: cannot open shared object file"*)
		bad "$1 is said to be missing: $3" ;;
	esac
	if [ "$2" -ne 0 ]; then ok "$1: exit $2"; else bad "$1: exit 0"; fi
}
run() {
	env -u DMACONN_REPLAY_LIBRARY -u DMACONN_MPI_LIBRARY -u DMACONN_REPLAY -u LD_LIBRARY_PATH -u LD_PRELOAD \
		"$tmp/lib/dmaconn" "$@" 2>&1
}
out=$(run --replay "$replay" -d cuda -c nvlink)
check libdmaconn_replay.so.0 $? "$out"
out=$(run --mpi -d cuda -c nvlink)
check libdmaconn_mpi.so.0 $? "$out"
finish
