# shellcheck shell=bash
# Sourced by the device scripts, which run from the repository's root: Jansson
# is the machine's, or that of the .deb files carried in .deps/, unpacked into
# $DEPS (the scripts give CMake $DEPS/usr as a prefix) and found there at run
# time through LD_LIBRARY_PATH.
DEPS=/tmp/dmaconn-deps
dc_jansson() {
	local f
	if [ ! -f /usr/include/jansson.h ] && ls .deps/libjansson*.deb >/dev/null 2>&1; then
		for f in .deps/libjansson*.deb; do dpkg -x "$f" "$DEPS"; done
		sed -i "s|^prefix=.*|prefix=$DEPS/usr|" "$DEPS"/usr/lib/*/pkgconfig/jansson.pc
		export LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
	fi
}
