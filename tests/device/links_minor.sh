#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# On a machine with NVIDIA GPUs: what the driver answers past a GPU's last
# NVLink (dmaconn asks up to NVML_NVLINK_MAX_LINKS, 36, and stops at
# NVML_ERROR_INVALID_ARGUMENT), and each GPU's minor number next to its NVML
# index and the /dev/nvidiaN nodes.  Then dmaconn on the hardware: its link
# counts and minor_number, a recording replayed (the same JSON, and no link
# entries written past the GPU's last), and --format slurm's File= lines.
# Run from the source root; logs in $OUT (default /tmp/dmaconn-links).
set -u
OUT=${OUT:-/tmp/dmaconn-links}
mkdir -p "$OUT"
B=build-links
show() { printf '\n$ %s\n' "$*"; "$@"; printf '(exit status %d)\n' $?; }

# shellcheck source=tests/device/jansson.sh
. tests/device/jansson.sh && dc_jansson
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$DEPS/usr >"$OUT/cmake.log" 2>&1 &&
	cmake --build $B -j >>"$OUT/cmake.log" 2>&1 || { echo "build failed"; tail -30 "$OUT/cmake.log"; exit 1; }

echo "== NVML itself: link states past the last link, batched and one by one; minor numbers"
python3 - <<'EOF'
import ctypes
nv = ctypes.CDLL("libnvidia-ml.so.1")
assert nv.nvmlInit_v2() == 0
count = ctypes.c_uint()
nv.nvmlDeviceGetCount_v2(ctypes.byref(count))


class FieldValue(ctypes.Structure):  # nvmlFieldValue_t
    _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint), ("timestamp", ctypes.c_longlong),
                ("latencyUsec", ctypes.c_longlong), ("valueType", ctypes.c_int), ("nvmlReturn", ctypes.c_int),
                ("value", ctypes.c_ulonglong)]


for i in range(count.value):
    h = ctypes.c_void_p()
    nv.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h))
    minor = ctypes.c_uint()
    rc = nv.nvmlDeviceGetMinorNumber(h, ctypes.byref(minor))
    per_link = []
    for link in range(40):
        st = ctypes.c_int()
        per_link.append(nv.nvmlDeviceGetNvLinkState(h, link, ctypes.byref(st)))
    fv = (FieldValue * 37)()
    for link in range(36):
        fv[link].fieldId, fv[link].scopeId = 165, link  # NVML_FI_DEV_NVLINK_GET_STATE
    fv[36].fieldId = 147  # NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT
    batch = nv.nvmlDeviceGetFieldValues(h, 37, fv)
    print("NVML index %d: minor number %s (rc %d)" % (i, minor.value if rc == 0 else "?", rc))
    print("  nvmlDeviceGetNvLinkState rc, links 0-39:", per_link)
    print("  nvmlDeviceGetFieldValues(37) rc %d; per-link rc, links 0-35:" % batch, [fv[k].nvmlReturn for k in range(36)],
          "switch links:", fv[36].value if fv[36].nvmlReturn == 0 else "rc %d" % fv[36].nvmlReturn)
nv.nvmlShutdown()
EOF
show ls -l /dev/nvidia[0-9]*

echo "== dmaconn"
show $B/dmaconn -d cuda -c nvlink
$B/dmaconn -d cuda -c nvlink --json -q >"$OUT/live.json"
python3 -c 'import json,sys; [print(d["ordinal"], "nvml_index", d.get("nvml_index"), "minor_number", d.get("minor_number"),
  "nvlink_active_links", d.get("nvlink_active_links")) for d in json.load(open(sys.argv[1]))["results"][0]["devices"]]' "$OUT/live.json"
show $B/dmaconn --format slurm
show $B/dmaconn --record "$OUT/recorded.json"
$B/dmaconn --json -q >"$OUT/live-all.json"
$B/dmaconn --json -q --replay "$OUT/recorded.json" >"$OUT/replayed-all.json"
if cmp -s "$OUT/live-all.json" "$OUT/replayed-all.json"; then echo "replay of the recording == live: yes"
else echo "replay of the recording == live: NO"; diff "$OUT/live-all.json" "$OUT/replayed-all.json"; fi
python3 -c 'import json,sys; [print("recorded NVML index", i, "minor_number", d.get("minor_number"), "links written",
  sum(e.get("repeat", 1) for e in d.get("nvlink", []))) for i, d in enumerate(json.load(open(sys.argv[1]))["nvml"]["devices"])]' \
	"$OUT/recorded.json"
