#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# On a GPU machine, in one run: what cuda/multicast, the placement and the
# typed results claim about the real node, against the CUDA driver, sysfs
# and nvidia-smi, and what they cost against an older tree.
#   - each device's multicast_supported against CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED
#     read in a child process (tests/device/cuda_attrs.c);
#   - CUDA left uninitialised in a process that ran every detector but
#     cuda/verified (tests/device/cuda_untouched.py);
#   - the placement (tests/device/placement_live.sh: --topo's CPU and NUMA
#     affinity against nvidia-smi topo -m and sysfs, the NICs against
#     /sys/class/infiniband);
#   - the NVML ABI against the machine's nvml.h, a recording replayed
#     against the live run;
#   - first detection and a whole `dmaconn -q --json` against OLD
#     (tests/device/compare_old.sh: medians of RUNS fresh processes).
# usage: tests/device/phase_check.sh OLD_TARBALL [RUNS]   (from the source root)
set -u
old=$1
runs=${2:-20}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
CUDA_INC=${CUDA_INC:-$(ls -d /usr/local/cuda*/targets/x86_64-linux/include 2>/dev/null | head -1)}
# shellcheck source=tests/device/jansson.sh
. tests/device/jansson.sh && dc_jansson
B=build-device
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$DEPS/usr" -DDMACONN_BUILD_TESTS=ON >/tmp/phase-cmake.log 2>&1 &&
	cmake --build $B -j --target dmaconn dmaconn_cli bench_first_detect >>/tmp/phase-cmake.log 2>&1 ||
	{ echo "build failed"; tail -30 /tmp/phase-cmake.log; exit 1; }
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv,noheader

echo "== NVML ABI: dmaconn's declarations against $CUDA_INC/nvml.h"
cc -std=gnu11 -Wall -Werror -I"$CUDA_INC" -Isrc/backends -Isrc/backends/nvml -Isrc/backends/cuda_verify -Itests/device tests/device/nvml_abi_check.c \
	tests/device/nvml_abi_ours.c -o $B/nvml_abi_check && $B/nvml_abi_check

echo "== multicast_supported against the CUDA driver (a child process)"
cc -std=gnu11 -D_GNU_SOURCE tests/device/cuda_attrs.c -o $B/cuda_attrs -ldl && $B/cuda_attrs | tee /tmp/cuda-attrs.txt
$B/dmaconn -q -d cuda -c multicast --json >/tmp/mc.json
python3 - <<'PY'
import json, re
doc = json.load(open("/tmp/mc.json"))["results"][0]
cuda = dict(re.findall(r"^(\S+) multicast_supported=(-?\d+)", open("/tmp/cuda-attrs.txt").read(), re.M))
ok = True
for d in doc["devices"]:
    want = cuda.get(d["pci_bus_id"])
    same = want is not None and int(want) == d.get("multicast_supported")
    ok &= same
    print("%s: dmaconn multicast_supported=%s (%s), CUDA %s: %s" % (d["pci_bus_id"], d.get("multicast_supported"),
          d.get("multicast_reason"), want, "equal" if same else "DIFFERENT"))
print("matrix", doc["matrix"], "pairs", doc.get("pairs"))
print("multicast_supported equals the CUDA attribute on every device:", "yes" if ok else "NO")
PY
$B/dmaconn -q --explain -d cuda -c multicast

echo "== CUDA untouched by every detector but cuda/verified"
python3 tests/device/cuda_untouched.py $B/libdmaconn.so.0 cuda/nvlink cuda/p2p cuda/multicast

echo "== placement"
B=$B bash tests/device/placement_live.sh 2>&1 | tail -40
$B/dmaconn --bind 0; echo "(exit status $?)"
cat /sys/bus/pci/devices/*/local_cpulist 2>/dev/null | sort | uniq -c

echo "== a recording of this node, replayed"
$B/dmaconn --record /tmp/phase-rec.json -q
$B/dmaconn --json -q >/tmp/live.json
$B/dmaconn --json -q --replay /tmp/phase-rec.json >/tmp/replayed.json
if cmp -s /tmp/live.json /tmp/replayed.json; then echo "replay of the recording == live: yes"
else echo "replay of the recording == live: NO"; diff /tmp/live.json /tmp/replayed.json | head; fi
$B/dmaconn --nics --json -q >/tmp/nics-live.json; $B/dmaconn --nics --json -q --replay /tmp/phase-rec.json >/tmp/nics-rep.json
cmp -s /tmp/nics-live.json /tmp/nics-rep.json && echo "placement replay == live: yes" || { echo "placement replay == live: NO"; diff /tmp/nics-live.json /tmp/nics-rep.json | head; }

echo "== cost against $old"
bash tests/device/compare_old.sh "$old" "$runs" 2>&1 | sed -n '1,/== every detector against/p'
