#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# On a GPU machine: cuda/multicast against CUDA itself, and its cost.
#  1. each device's multicast_supported equals CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED
#     (132), read by a child process that initialises CUDA (dmaconn never does);
#  2. libcuda is not mapped in a process that ran every detector (Python binding);
#  3. `dmaconn -q --json` (every detector): median of RUNS fresh processes, this
#     tree against OLD (a tarball made with `git archive --prefix=old/ -o F REV`),
#     alternating, in the same run.
# usage: tests/device/multicast_check.sh OLD.tar.gz [RUNS]   (from the source root)
set -u
old_tar=$1
runs=${2:-20}
# shellcheck source=tests/device/jansson.sh
. tests/device/jansson.sh && dc_jansson
cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$DEPS/usr" >/dev/null 2>&1 &&
	cmake --build build-device -j >/dev/null 2>&1 || { echo "this tree's build failed"; exit 1; }
mkdir -p /tmp/dmaconn-old && tar -xf "$old_tar" -C /tmp/dmaconn-old || { echo "cannot unpack $old_tar"; exit 1; }
old_src=$(dirname "$(find /tmp/dmaconn-old -maxdepth 2 -name CMakeLists.txt | head -1)")
cmake -S "$old_src" -B build-old -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$DEPS/usr" >/dev/null 2>&1 &&
	cmake --build build-old -j --target dmaconn_cli >/dev/null 2>&1 || { echo "old build failed"; exit 1; }
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
nvidia-smi -q | grep -A8 '^    Fabric' | head -12

echo "== multicast_supported against CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED"
build-device/dmaconn -d cuda -c multicast --json -q >/tmp/mc.json
python3 - <<'PY'
import ctypes, json, subprocess, sys
doc = json.load(open("/tmp/mc.json"))["results"][0]
child = r'''
import ctypes, json
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
n = ctypes.c_int()
cu.cuDeviceGetCount(ctypes.byref(n))
out = []
for i in range(n.value):
    d, v = ctypes.c_int(), ctypes.c_int()
    cu.cuDeviceGet(ctypes.byref(d), i)
    rc = cu.cuDeviceGetAttribute(ctypes.byref(v), 132, d)
    out.append(v.value if rc == 0 else None)
print(json.dumps(out))
'''
cuda = json.loads(subprocess.run([sys.executable, "-c", child], stdout=subprocess.PIPE, check=True).stdout)
ours = [d.get("multicast_supported") for d in doc["devices"]]
print("dmaconn multicast_supported:", ours, [d.get("multicast_reason") for d in doc["devices"]])
print("CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED:", cuda)
print("equal:", "yes" if ours == cuda else "NO")
print("devices:", json.dumps(doc["devices"]))
PY

echo "== libcuda in the maps of a process that ran every detector"
DMACONN_LIBRARY="$PWD/build-device/libdmaconn.so.0" PYTHONPATH="$PWD/python" python3 - <<'PY'
import dmaconn
for t, c in dmaconn.list_detectors():
    if c != "verified":
        dmaconn.detect(t, c)
maps = open("/proc/self/maps").read()
print("multicast:", dmaconn.detect("cuda", "multicast").matrix)
print("libcuda mapped:", "yes" if "libcuda" in maps else "no", "; libnvidia-ml mapped:", "yes" if "libnvidia-ml" in maps else "no")
PY

echo "== dmaconn -q --json, $runs fresh processes each, alternating (ms)"
python3 - "$runs" <<'PY'
import statistics, subprocess, sys, time
runs = int(sys.argv[1])
t = {"old": [], "new": []}
for k in range(runs):
    for name, cli in (("old", "build-old/dmaconn"), ("new", "build-device/dmaconn")) if k % 2 else \
            (("new", "build-device/dmaconn"), ("old", "build-old/dmaconn")):
        s = time.perf_counter()
        subprocess.run([cli, "-q", "--json"], stdout=subprocess.DEVNULL, check=False)
        t[name].append((time.perf_counter() - s) * 1e3)
old, new = statistics.median(t["old"]), statistics.median(t["new"])
print("old median %.2f ms, new median %.2f ms, ratio %.3f (goal <= 1.05)" % (old, new, new / old))
print("old", [round(x, 1) for x in t["old"]])
print("new", [round(x, 1) for x in t["new"]])
PY
