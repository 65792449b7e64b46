#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# On a machine with NVIDIA GPUs (MIG off is fine): for CUDA_VISIBLE_DEVICES
# values with MIG entries, the number of devices the CUDA driver itself
# enumerates (cuInit + cuDeviceGetCount, a fresh process each) against the
# number dmaconn counts (cuda/nvlink), and, where the GPUs are in MIG mode,
# the instances NVML lists.  Prints one line per value, "same" or "DIFFER",
# and "N differ" at the end.  Needs build-device (tests/device/run.sh makes
# it) or BUILD=DIR.  About 20 s.  Run from the source root.
set -u
B=${BUILD:-build-device}
[ -x "$B/dmaconn" ] || { echo "no $B/dmaconn: run tests/device/run.sh first, or set BUILD"; exit 1; }
PY=${PYTHON:-python3}
uuid=$("$B/dmaconn" -d cuda -c nvlink --json | "$PY" -c 'import json,sys; d=json.load(sys.stdin)["results"][0]["devices"]; print(d[0]["uuid"] if d else "GPU-none")')
mig=$("$B/dmaconn" -d cuda -c nvlink --json | "$PY" -c '
import json, sys
print(" ".join(d["uuid"] for d in json.load(sys.stdin)["results"][0]["devices"] if d.get("mig") == "enabled"))')
echo "first GPU: $uuid; GPUs in MIG mode: ${mig:-none}"
cuda_count() {
	"$PY" - <<'EOF'
import ctypes
cu = ctypes.CDLL("libcuda.so.1")
n = ctypes.c_int(-1)
rc = cu.cuInit(0)
print(n.value if rc else (cu.cuDeviceGetCount(ctypes.byref(n)) or n.value), rc)
EOF
}
differ=0
for cvd in "MIG-zzz,MIG-not-a-uuid,0" "0,MIG-zzz" "MIG-GPU-${uuid#GPU-}/1/0,0" "MIG-${uuid#GPU-},0" "0,MIG-" \
	"MIG-4f2a5e4c-7a8b-5c3d-9e1f-0a1b2c3d4e5f"; do
	read -r cuda rc < <(CUDA_VISIBLE_DEVICES=$cvd cuda_count)
	ours=$(CUDA_VISIBLE_DEVICES=$cvd "$B/dmaconn" -q -d cuda -c nvlink --json |
		"$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["results"][0]["matrix"]))')
	# cuInit fails with CUDA_ERROR_NO_DEVICE (100) when nothing is visible: 0 devices.
	[ "$rc" = 100 ] && cuda=0
	verdict=same
	[ "$cuda" = "$ours" ] || { verdict=DIFFER; differ=$((differ + 1)); }
	printf 'CUDA_VISIBLE_DEVICES=%s: CUDA %s (cuInit %s), dmaconn %s: %s\n' "$cvd" "$cuda" "$rc" "$ours" "$verdict"
done
echo "$differ differ"
