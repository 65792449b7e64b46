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

# dc_setup NAME: logs in $OUT (default /tmp/dmaconn-NAME), NCCL, PyTorch and
# NVSHMEM kept off NVLink multicast, and Jansson as above.
dc_setup() {
	OUT=${OUT:-/tmp/dmaconn-$1}
	mkdir -p "$OUT"
	export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
	dc_jansson
}

# dc_build DIR [CMAKE_OPTION ...] [-- BUILD_OPTION ...]: a Release build of the
# tree into DIR, its log in $OUT/cmake.log; exits with the log's end on failure.
dc_build() {
	local dir=$1 cm=()
	shift
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do cm+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$DEPS/usr" "${cm[@]}" >"$OUT/cmake.log" 2>&1 &&
		cmake --build "$dir" -j "$@" >>"$OUT/cmake.log" 2>&1 ||
		{ echo "build failed"; tail -30 "$OUT/cmake.log"; exit 1; }
}
