# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Sourced by the device scripts, which run from the repository's root: Jansson
# is the machine's, or that of the .deb files carried in .deps/, unpacked into
# $DEPS (the scripts give CMake $DEPS/usr as a prefix) and found there at run
# time through LD_LIBRARY_PATH.  .deps/ is not part of the repository: on a
# Debian machine with network, `mkdir -p .deps && cd .deps && apt-get download
# libjansson4 libjansson-dev`, then carry it to the GPU machine with the tree.
DEPS=/tmp/dmaconn-deps
dc_jansson() {
	local f
	if [ ! -f /usr/include/jansson.h ] && ls .deps/libjansson*.deb >/dev/null 2>&1; then
		for f in .deps/libjansson*.deb; do dpkg -x "$f" "$DEPS"; done
		sed -i "s|^prefix=.*|prefix=$DEPS/usr|" "$DEPS"/usr/lib/*/pkgconfig/jansson.pc
		export LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
	elif [ ! -f /usr/include/jansson.h ]; then
		echo "no Jansson here and no .deb files in .deps/: the CLI and the replay component are left out" >&2
	fi
}
