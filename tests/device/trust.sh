#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# On a machine with NVIDIA GPUs (written for 1x H200, where no peer pair
# exists): cuda/verified and the reasons for zeros, in one run, under three
# minutes.  Prints, each under a "== " heading:
#   - dmaconn's NVML declarations (BAR1, virtualization mode, confidential
#     computing included) against the machine's nvml.h;
#   - the verified matrix and its exit status;
#   - bench/verified_bench.py: cold (--no-cache) and cached times of
#     `dmaconn -d cuda -c verified`, medians of fresh processes, and the
#     vLLM-style check (bench/vllm_p2p_check.py, batched and per pair) timed
#     in the same run, with whether the matrices agree;
#   - --explain (every detector, then cuda/p2p and cuda/verified), --topo;
#   - a recording with its verification section (`--record FILE --verify`,
#     written to $OUT/h200x1-verified.json for the lead to bring back), its
#     replay and the kernel facts it holds;
#   - the same views on a replay of the 2x H200 recording
#     (examples/h200x2-recorded.json, no verification section: "not
#     verified in this recording") and of a section with a failed and a hung
#     pair (tests/topologies-reasons/verified-fail-hang.json);
#   - the reason, cache and verification tests of the suite.
# Logs and results go to $OUT (default /tmp/dmaconn-trust).  Run from the
# source root: bash tests/device/trust.sh
set -u
OUT=${OUT:-/tmp/dmaconn-trust}
mkdir -p "$OUT"
CUDA_INC=${CUDA_INC:-$(ls -d /usr/local/cuda/targets/x86_64-linux/include /usr/local/cuda*/targets/x86_64-linux/include 2>/dev/null | head -1)}
B=build-trust
show() { printf '\n$ %s\n' "$*"; "$@"; printf '(exit status %d)\n' $?; }
start=$(date +%s)

# Jansson for the replay component: the machine's, or .deb files carried in .deps/.
# shellcheck source=tests/device/jansson.sh
. tests/device/jansson.sh && dc_jansson
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$DEPS/usr -DDMACONN_BUILD_TESTS=ON \
	-DDMACONN_NVML_INCLUDE_DIR="$CUDA_INC" >"$OUT/cmake.log" 2>&1 &&
	cmake --build $B -j >>"$OUT/cmake.log" 2>&1 || { echo "build failed"; tail -30 "$OUT/cmake.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"

echo "== machine"
nvidia-smi -L
nvidia-smi --query-gpu=driver_version,pci.bus_id --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1

echo "== what this machine's kernel shows (src/model/host.c on the live tree)"
GPUS=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | sed 's/^0000//' | tr 'A-F' 'a-f')
$B/tests/test_host --show $GPUS

echo "== ABI: dmaconn's NVML declarations against $CUDA_INC/nvml.h"
cc -std=gnu11 -Wall -Werror -I"$CUDA_INC" -Isrc/backends -Isrc/backends/nvml -Isrc/backends/cuda_verify -Itests/device tests/device/nvml_abi_check.c \
	tests/device/nvml_abi_ours.c -o $B/nvml_abi_check2 && $B/nvml_abi_check2

# A cache of this run's own (fresh, private, below sticky /tmp: the cache
# refuses a directory below one that others may write), so that no earlier
# verdict answers.
export DMACONN_CACHE_DIR=$(mktemp -d /tmp/dmaconn-trust-cache.XXXXXX)

echo "== the verified matrix (cold: the helper runs)"
show $B/dmaconn -d cuda -c verified --no-cache
show $B/dmaconn -d cuda -c verified --no-cache --json

echo "== bench: cold and cached cuda/verified against the vLLM-style check, in one run"
timeout 150 python3 bench/verified_bench.py $B/dmaconn --runs 7 --vllm-runs 3 --json "$OUT/verified_bench.json"
echo "(exit status $?)"

echo "== explain"
show $B/dmaconn --explain
show $B/dmaconn --explain -d cuda -c p2p
show $B/dmaconn --explain -d cuda -c verified
show $B/dmaconn --explain --json
show $B/dmaconn --topo

echo "== a recording with its verification section"
show $B/dmaconn --record "$OUT/h200x1-verified.json" --verify
show $B/dmaconn --replay "$OUT/h200x1-verified.json" -d cuda -c verified
python3 - "$OUT/h200x1-verified.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print("verification section:", json.dumps(d.get("verification")))
files = d.get("files", {})
print("kernel files recorded: %d" % len(files))
for path, v in sorted(files.items()):
    if isinstance(v, dict):
        print("  %s: %d bytes of config space" % (path, len(v.get("hex", "")) // 2))
    else:
        print("  %s: %r" % (path, v[:160]))
nv = d.get("nvml", {})
print("conf_compute:", nv.get("conf_compute"))
for dev in nv.get("devices", []):
    if isinstance(dev, dict):
        print("device", dev.get("pci", {}).get("bus_id"), "bar1_total", dev.get("bar1_total"),
              "virtualization_mode", dev.get("virtualization_mode"), "fabric", dev.get("fabric"))
EOF

echo "== the 2x H200 recording, replayed (no verification section)"
R=examples/h200x2-recorded.json
show $B/dmaconn --replay $R -d cuda -c verified
show $B/dmaconn --replay $R --explain -d cuda -c verified
show $B/dmaconn --replay $R --explain
show $B/dmaconn --replay $R --topo
echo "== a recording whose section has a failed and a hung pair"
show $B/dmaconn --replay tests/topologies-reasons/verified-fail-hang.json -d cuda -c verified
show $B/dmaconn --replay tests/topologies-reasons/verified-fail-hang.json --explain -d cuda -c verified

echo "== the suite's reason, cache and verification tests"
(cd $B && timeout 120 ctest -R 'nvml_abi|reasons_|host_facts|record_verify|verified|^cli$' --output-on-failure) \
	>"$OUT/ctest.log" 2>&1
grep -E "tests passed|tests failed|\*\*\*|Failed  " "$OUT/ctest.log" | tail -20
echo "total: $(( $(date +%s) - start )) s; results in $OUT"
