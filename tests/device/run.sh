#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# On a machine with NVIDIA GPUs: proves the declared NVML (and CUDA driver)
# ABI against the real headers, runs dmaconn on the hardware next to
# nvidia-smi and PyTorch, and records the node.  Writes logs and the
# recording to $OUT (default /tmp/dmaconn-device).  Run from the source root.
set -u
OUT=${OUT:-/tmp/dmaconn-device}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
CUDA_INC=${CUDA_INC:-$(ls -d /usr/local/cuda*/targets/x86_64-linux/include 2>/dev/null | head -1)}
B=build-device
show() { printf '\n$ %s\n' "$*"; "$@"; }

# Jansson for the recorder: the machine's, or .deb files carried in .deps/.
# shellcheck source=tests/device/jansson.sh
. tests/device/jansson.sh && dc_jansson
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$DEPS/usr -DDMACONN_BUILD_TESTS=ON >"$OUT/cmake.log" 2>&1 &&
	cmake --build $B -j >>"$OUT/cmake.log" 2>&1 || { echo "build failed"; tail -30 "$OUT/cmake.log"; exit 1; }

echo "== ABI: dmaconn's NVML declarations against $CUDA_INC/nvml.h"
cc -std=gnu11 -Wall -Werror -I"$CUDA_INC" -Isrc/backends -Isrc/backends/nvml -Isrc/backends/cuda_verify -Itests/device tests/device/nvml_abi_check.c \
	tests/device/nvml_abi_ours.c -o $B/nvml_abi_check && $B/nvml_abi_check
if [ -f tests/device/cuda_abi_check.c ]; then
	echo "== ABI: dmaconn's CUDA driver declarations against $CUDA_INC/cuda.h"
	cc -std=gnu11 -Wall -Werror -I"$CUDA_INC" -Isrc/backends -Isrc/backends/nvml -Isrc/backends/cuda_verify -Itests/device tests/device/cuda_abi_check.c -ldl \
		-o $B/cuda_abi_check && $B/cuda_abi_check
fi

echo "== the hardware as nvidia-smi sees it"
show nvidia-smi topo -m
show nvidia-smi topo -p2p a
show nvidia-smi nvlink -s -i 0

echo "== dmaconn on the hardware"
show $B/dmaconn
show $B/dmaconn -d cuda -c nvlink --json
show env CUDA_VISIBLE_DEVICES=1,0 $B/dmaconn -d cuda -c nvlink
show env CUDA_VISIBLE_DEVICES=1 $B/dmaconn -d cuda -c nvlink
show env CUDA_VISIBLE_DEVICES=0 $B/dmaconn -d cuda -c nvlink
uuid1=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 1 2>/dev/null)
show env CUDA_VISIBLE_DEVICES="${uuid1:0:12},0" $B/dmaconn -d cuda -c nvlink
show env CUDA_DEVICE_ORDER=PCI_BUS_ID $B/dmaconn -d cuda -c p2p --json
show $B/dmaconn --topo
if [ -x $B/dmaconn-verify-helper ]; then
	show $B/dmaconn --verify
	show $B/dmaconn --verify --json
fi

echo "== record this node, replay it"
show $B/dmaconn --record "$OUT/recorded.json"
$B/dmaconn --json -q >"$OUT/live.json"
$B/dmaconn --json -q --replay "$OUT/recorded.json" >"$OUT/replayed.json"
if cmp -s "$OUT/live.json" "$OUT/replayed.json"; then echo "replay of the recording == live: yes"
else echo "replay of the recording == live: NO"; diff "$OUT/live.json" "$OUT/replayed.json"; fi

if [ -f python/tests/device_check.py ]; then
	echo "== Python binding next to PyTorch"
	show env DMACONN_LIBRARY="$PWD/$B/libdmaconn.so.0" PYTHONPATH="$PWD/python" python3 python/tests/device_check.py
fi

echo "== the test suite on this machine (fakes and replays), then the functional check for real"
(cd $B && ctest --output-on-failure 2>&1 | grep -v "^ok " | tail -60)
echo "== which libraries a live detection maps (anything CUDA?)"
LD_DEBUG=libs $B/dmaconn -d cuda -c p2p -q 2>&1 | grep -E "calling init|find library" | grep -i -E "cuda|nvidia" | sed 's/^ *[0-9]*://' | sort -u | head -20
[ -x $B/tests/test_verify ] && show $B/tests/test_verify --real "$PWD/$B/dmaconn-verify-helper"

echo "== first detection, fresh processes: dmaconn (parallel+batched), dmaconn naive (serial, per link), raw NVML floor"
for i in 1 2 3 4 5; do $B/bench/first_detect; done
for i in 1 2 3; do DMACONN_NVML_THREADS=1 DMACONN_NVML_NO_BATCH=1 $B/bench/first_detect; done
for i in 1 2 3; do $B/bench/nvml_floor; done

echo "== where NVML's time goes"
$B/bench/nvml_probe; for m in lazy lazy attach attach noattach noattach; do $B/bench/nvml_probe $m; done
