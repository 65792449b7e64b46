#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The bundled Jansson's offline source: the environment variable
# DMACONN_JANSSON_TARBALL (what `DMACONN_JANSSON_TARBALL=FILE pip install .`
# hands to the configure step) is used instead of a download.  A file that
# is not Jansson's source must be refused by its checksum, naming the file;
# the download URL points nowhere, so a configure that ignores the variable
# fails differently ("Could not download").
# Usage: jansson_tarball_test.sh SOURCE_DIR
set -u
src=${1:-.}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "not jansson" >"$T/offline-jansson.tar.gz"
DMACONN_JANSSON_TARBALL="$T/offline-jansson.tar.gz" cmake -S "$src" -B "$T/build" \
	-DDMACONN_BUNDLED_JANSSON=ON -DDMACONN_JANSSON_URL="file://$T/nowhere.tar.gz" >"$T/out" 2>&1
st=$?
if [ $st != 0 ] && grep -q "offline-jansson.tar.gz is not Jansson" "$T/out"; then
	echo "ok DMACONN_JANSSON_TARBALL from the environment is the source read (and checked)"
	exit 0
fi
echo "FAIL DMACONN_JANSSON_TARBALL from the environment not used (configure status $st):"
grep -A4 "CMake Error" "$T/out" | head -n 12
exit 1
