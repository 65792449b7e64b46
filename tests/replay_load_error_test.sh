#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The replay component is beside libdmaconn but a library it needs is not
# there (a build against the system's Jansson, run where libjansson.so.4 is
# missing): Python's error names that library, not libdmaconn_replay.so.0.
# Usage: replay_load_error_test.sh BUILD_DIR   (run from the source root)
set -u
BUILD=$(cd "$1" && pwd)
CC=${CC:-cc}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/lib" "$T/gone"
echo 'int dc_test_stub(void); int dc_test_stub(void) { return 0; }' >"$T/stub.c"
# A replay component that needs a library by a name no system has.
"$CC" -shared -fPIC -o "$T/gone/libdmaconn-test-gone.so.4" -Wl,-soname,libdmaconn-test-gone.so.4 "$T/stub.c" &&
	"$CC" -shared -fPIC -o "$T/lib/libdmaconn_replay.so.0" "$T/stub.c" -Wl,--no-as-needed -L"$T/gone" -l:libdmaconn-test-gone.so.4 ||
	{ echo "FAIL cannot build the stand-ins"; exit 1; }
rm -r "$T/gone"
cp "$BUILD/libdmaconn.so.0" "$T/lib/"
out=$(env -u DMACONN_REPLAY_LIBRARY PYTHONPATH="$(pwd)/python" DMACONN_LIBRARY="$T/lib/libdmaconn.so.0" \
	DMACONN_REPLAY="$(pwd)/tests/topologies/h200x2.json" "${PYTHON:-python3}" -c '
import dmaconn
try:
    dmaconn.detect("cuda", "nvlink")
except dmaconn.Error as e:
    print(e)
else:
    print("no error")
' 2>&1)
echo "$out"
case $out in
*"libdmaconn-test-gone.so.4"*) echo "ok the error names the missing library" ;;
*) echo "FAIL the error does not name libdmaconn-test-gone.so.4"; exit 1 ;;
esac
