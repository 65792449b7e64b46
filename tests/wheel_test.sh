#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The Python package as a user gets it (CI; needs PyPI and deb.debian.org for
# Jansson's source): `pip install .` in a fresh virtual environment, then:
# the wheel's licence metadata, Jansson built in (nothing outside the package
# but libc and the loader, whatever this machine has installed), import and
# detect on a replay with no environment variables set, the console script
# and `python -m dmaconn`, the import time, and `pip uninstall` leaving
# nothing behind.
# Usage: tests/wheel_test.sh [WORK_DIR]   (run from the source root)
set -eu
PY=${PYTHON:-python3}
W=${1:-$(mktemp -d)}
mkdir -p "$W"
W=$(cd "$W" && pwd)
SRC=$(pwd)
. "$(dirname "$0")/harness.sh"

# As root, in a mount namespace of its own (unshare -m), the files of
# libjansson-dev are hidden under /dev/null while pip builds, as on a machine
# without them, and those of libjansson4 too once it is installed (Debian's
# own linker needs libjansson.so.4, so the build cannot do without it).
hide() { # packages...
	for f in $(dpkg -L "$@" 2>/dev/null); do
		if [ -f "$f" ] && [ ! -L "$f" ]; then mount --bind /dev/null "$f" || return 1; fi
	done
}
if [ -z "${DMACONN_WHEEL_NO_JANSSON:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 &&
	command -v dpkg >/dev/null 2>&1 && unshare -m true 2>/dev/null; then
	DMACONN_WHEEL_NO_JANSSON=1 exec unshare -m sh "$0" "$W"
fi
if [ "${DMACONN_WHEEL_NO_JANSSON:-}" = 1 ]; then
	hide libjansson-dev && [ ! -s /usr/include/jansson.h ] && ! pkg-config --exists jansson 2>/dev/null &&
		ok "libjansson-dev hidden for the build" || bad "libjansson-dev still visible"
else
	echo "note: Jansson not hidden (needs root, dpkg and unshare -m); the ELF checks below still apply"
fi

rm -rf "$W/venv"
"$PY" -m venv "$W/venv"
V=$W/venv
(cd "$V" && find . -path ./lib/*/site-packages/pip -prune -o -print | sort) >"$W/before.txt"
# -v: the build's own lines, to see that Jansson was built here.
"$V/bin/pip" install -v "$SRC" >"$W/build.log" 2>&1 ||
	{ tail -n 40 "$W/build.log"; echo "FAIL pip install ."; exit 1; }
site=$("$V/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
grep -q "Jansson 2.14: built from source, linked statically" "$W/build.log" &&
	ok "Jansson built from source for the wheel" || bad "Jansson not built from source"
for member in dmaconn/bin/dmaconn dmaconn/lib/libdmaconn.so.0 dmaconn/lib/libdmaconn_replay.so.0 \
	dmaconn/libexec/dmaconn/dmaconn-verify-helper dmaconn/__main__.py dmaconn/licenses/jansson-LICENSE \
	dmaconn-0.1.0.dist-info/licenses/LICENSE; do
	[ -f "$site/$member" ] && ok "installed $member" || bad "missing $member"
done
if [ "${DMACONN_WHEEL_NO_JANSSON:-}" = 1 ]; then
	hide libjansson4 && ! "$PY" -c 'import ctypes; ctypes.CDLL("libjansson.so.4")' 2>/dev/null &&
		ok "libjansson.so.4 hidden for the checks below" || bad "libjansson.so.4 still loadable"
fi
cmp -s "$site/dmaconn-0.1.0.dist-info/licenses/LICENSE" "$SRC/LICENSE" || bad "the wheel's LICENSE differs"
meta=$site/dmaconn-0.1.0.dist-info/METADATA
grep -qx "License-Expression: BSD-3-Clause AND MIT" "$meta" && grep -qx "License-File: LICENSE" "$meta" &&
	ok "METADATA: License-Expression and License-File" || { bad "METADATA lacks the licence:"; head -n 12 "$meta"; }

# Every ELF file: what the loader resolves is inside the package, or libc.
elves=0
for f in $(find "$site/dmaconn" -type f); do
	head -c 4 "$f" | grep -q "ELF" || continue
	elves=$((elves + 1))
	if readelf -d "$f" | grep -q 'NEEDED.*libjansson'; then bad "$f needs libjansson"; fi
	outside=$(ldd "$f" | awk '$2 == "=>" { print $1, $3 }' | grep -v "^\(libc\|libdl\|libpthread\|libm\|ld-linux[^ ]*\)\.so" |
		grep -v " $site/" || true)
	missing=$(ldd "$f" | grep "not found" || true)
	if [ -n "$outside$missing" ]; then bad "$f needs $outside$missing"; fi
done
[ "$elves" -ge 4 ] && ok "$elves ELF files need nothing outside the wheel but libc" || bad "only $elves ELF files"

cd /
replay=$SRC/tests/topologies/h200x2.json
out=$(env -i "$V/bin/python" -c "
import os
os.environ['DMACONN_REPLAY'] = '$replay'
import dmaconn
r = dmaconn.detect('cuda', 'nvlink')
print(r.matrix, dmaconn.library_path().startswith('$site/dmaconn/lib/'))
") && [ "$out" = "[[0, 18], [18, 0]] True" ] && ok "import and detect, no environment" || bad "detect: '$out'"
out=$(env -i "$V/bin/dmaconn" --replay "$replay" --json -d cuda -c nvlink) &&
	echo "$out" | "$PY" -c 'import json, sys; assert json.load(sys.stdin)["results"][0]["matrix"] == [[0, 18], [18, 0]]' &&
	ok "the dmaconn console script" || bad "console script: '$out'"
[ "$(env -i "$V/bin/python" -m dmaconn --version)" = "dmaconn 0.1.0" ] && ok "python -m dmaconn" ||
	bad "python -m dmaconn"
err=$(env -i DMACONN_CUDA_LIBRARY=/nonexistent/libcuda.so.1 "$V/bin/dmaconn" --verify 2>&1 >/dev/null || true)
case $err in
*"cannot load the CUDA driver (/nonexistent/libcuda.so.1)"*) ok "the verify helper runs from the wheel" ;;
*) bad "verify helper: $err" ;;
esac
cd "$SRC"
PYTHONPATH= "$PY" bench/import_time.py --python "$V/bin/python" --runs 11 --check 5 &&
	ok "import dmaconn within 5 ms" || bad "import time"

"$V/bin/pip" uninstall -q -y dmaconn
(cd "$V" && find . -path ./lib/*/site-packages/pip -prune -o -print | sort) >"$W/after.txt"
if diff -u "$W/before.txt" "$W/after.txt"; then ok "pip uninstall leaves nothing behind"
else bad "pip uninstall left files behind"; fi
finish
