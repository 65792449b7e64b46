#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# On a machine with NVIDIA GPUs: dmaconn's placement against the machine's
# own sources.  For each GPU, --topo's CPU Affinity and NUMA Affinity are
# `nvidia-smi topo -m`'s, and the cpuset of --nics --json is the GPU's sysfs
# local_cpulist (NVML's where sysfs says -1); --topo has a NIC column per
# /sys/class/infiniband device, as nvidia-smi has, and none without one, the
# reason then said; --bind's numactl names the CPU node; neither dmaconn nor
# dmaconn.placement() in Python maps libcuda.  Run from the source root;
# prints PASS or FAIL lines and the outputs, logs in $OUT (default
# /tmp/dmaconn-placement).
set -u
OUT=${OUT:-/tmp/dmaconn-placement}
mkdir -p "$OUT"
B=${B:-build-placement}
# shellcheck source=tests/device/jansson.sh
. tests/device/jansson.sh && dc_jansson
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DDMACONN_BUILD_TESTS=OFF -DCMAKE_PREFIX_PATH=$DEPS/usr \
	>"$OUT/cmake.log" 2>&1 && cmake --build $B -j --target dmaconn_cli dmaconn >>"$OUT/cmake.log" 2>&1 ||
	{ echo "build failed"; tail -30 "$OUT/cmake.log"; exit 1; }
status=0
check() { # check OK WHAT
	if [ "$1" = 0 ]; then echo "PASS $2"; else echo "FAIL $2"; status=1; fi
}

echo "== nvidia-smi topo -m"
nvidia-smi topo -m | tee "$OUT/nvidia-smi-topo.txt"
echo "== dmaconn --topo -d cuda"
$B/dmaconn --topo -d cuda | tee "$OUT/topo.txt"
echo "== dmaconn --nics"
$B/dmaconn --nics
$B/dmaconn --nics --json >"$OUT/nics.json"
echo "== dmaconn --bind 0"
$B/dmaconn --bind 0
check $? "--bind 0 exits 0"

# The columns of nvidia-smi's GPU rows after the GPU and NIC ones: CPU
# Affinity, NUMA Affinity (and GPU NUMA ID); dmaconn's likewise.
python3 - "$OUT" <<'EOF' || status=1
import json, os, re, sys
out = sys.argv[1]
def rows(path):
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", l) for l in open(path).read().splitlines()]
    head = next(l for l in lines if "CPU Affinity" in l)
    cols = head.split()
    # the device columns (GPU0, NIC3), not the "GPU" of "GPU NUMA ID"
    ndev = sum(bool(re.fullmatch(r"(GPU|NIC)\d+", c)) for c in cols)
    got = {}
    for l in lines[lines.index(head) + 1:]:
        f = l.split()
        if f and f[0].startswith("GPU") and f[0][3:].isdigit():
            got[int(f[0][3:])] = (f[1 + ndev], f[2 + ndev])  # CPU Affinity, NUMA Affinity
    nics = sum(bool(re.fullmatch(r"NIC\d+", c)) for c in cols)
    return got, nics
smi, smi_nics = rows(os.path.join(out, "nvidia-smi-topo.txt"))
ours, our_nics = rows(os.path.join(out, "topo.txt"))
doc = json.load(open(os.path.join(out, "nics.json")))["placement"]
ok = True
for i, (cpus, node) in sorted(smi.items()):
    d = doc["devices"][i]
    bus = d["pci_bus_id"].lower()
    try:
        local = open("/sys/bus/pci/devices/%s/local_cpulist" % bus).read().strip()
        numa = open("/sys/bus/pci/devices/%s/numa_node" % bus).read().strip()
    except OSError as e:
        local, numa = "?", str(e)
    same = ours.get(i) == (cpus, node) and (d.get("cpuset") == local or numa == "-1")
    print("%s GPU%d: nvidia-smi %s / %s, dmaconn %s, sysfs local_cpulist %s numa_node %s, source %s" % (
        "PASS" if same else "FAIL", i, cpus, node, ours.get(i), local, numa, d.get("cpu_source")))
    ok &= same
ib = sorted(os.listdir("/sys/class/infiniband")) if os.path.isdir("/sys/class/infiniband") else []
same = smi_nics == our_nics == len(doc["nics"]) == len(ib)
print("%s NICs: nvidia-smi %d columns, dmaconn %d, /sys/class/infiniband %s" % ("PASS" if same else "FAIL", smi_nics,
                                                                            our_nics, ib))
ok &= same
if not ib:
    said = doc.get("nics_reason") in ("no_rdma_nic", "no_rdma_class") and doc.get("nics_reason_text")
    print("%s no NIC: the reason is said (%s: %s)" % ("PASS" if said else "FAIL", doc.get("nics_reason"),
                                                     doc.get("nics_reason_text")))
    ok &= bool(said)
sys.exit(0 if ok else 1)
EOF

# CUDA is never initialised.  NVML (driver 580 and later) dlopens libcuda
# itself in nvmlInit, so the library being mapped proves nothing; what does:
# cuDeviceGetCount answers CUDA_ERROR_NOT_INITIALIZED (3) in the very process
# that ran the placement, as long as nobody called cuInit.
LD_DEBUG=libs $B/dmaconn --nics >/dev/null 2>"$OUT/ld-debug.txt"
grep -m1 "libcuda" "$OUT/ld-debug.txt"
DMACONN_LIBRARY=$PWD/$B/libdmaconn.so.0 PYTHONPATH=python python3 -c '
import ctypes, dmaconn, sys
p = dmaconn.placement()
print([(d.index, d.cpuset, d.cpu_numa_node, d.numactl) for d in p.devices])
n = ctypes.c_int(-1)
rc = ctypes.CDLL("libcuda.so.1").cuDeviceGetCount(ctypes.byref(n))
print("after dmaconn.placement(): cuDeviceGetCount ->", rc, "(3 = CUDA_ERROR_NOT_INITIALIZED)")
sys.exit(rc != 3)'
check $? "dmaconn.placement() leaves CUDA uninitialised"
echo "placement_live: $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
