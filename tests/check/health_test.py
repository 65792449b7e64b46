#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""NVLink health as NVIDIA's rules have it (docs.nvidia.com/health-validation,
NVSentinel, NVIDIA/DCGM#198), on hand-written replays of what NVML answers:

  - NVML's per-link speed (NVML_FI_DEV_NVLINK_GET_SPEED) is read for every
    active link, batched or link by link, kept through --record, and shown
    as the device property nvlink_speeds_mbps ("0-4:53125,5:26562,...").

Each case asserts the exit status and the finding lines.

Usage: health_test.py BUILD_DIR   (run from the source root)
"""
import json
import os
import subprocess
import sys
import tempfile

BUILD = os.path.abspath(sys.argv[1])
CLI = os.path.join(BUILD, "dmaconn")
T = "tests/topologies"
TMP = tempfile.mkdtemp(prefix="dmaconn-health-")
failures = 0


def check(ok, what):
    global failures
    print("%s %s" % ("ok" if ok else "FAIL", what))
    failures += not ok


def env_of(**extra):
    """A machine without NVIDIA's libraries, kernel tree or verdict cache."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("DMACONN_") and k not in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")}
    env.update(DMACONN_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1",
               DMACONN_CUDA_LIBRARY="/nonexistent/libcuda.so.1",
               DMACONN_SYSFS_ROOT="tests/sysfs/no-nvidia",
               DMACONN_CACHE_DIR=os.path.join(TMP, "no-cache"))
    env.update(extra)
    return env


def run(*args, **extra):
    """(status, stdout, stderr)."""
    try:
        p = subprocess.run([CLI] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_of(**extra),
                           timeout=120)
    except subprocess.TimeoutExpired:
        return None, "", "timed out"
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def devices(topology, **extra):
    st, out, _ = run("--replay", topology, "-d", "cuda", "-c", "nvlink", "--json", **extra)
    try:
        return json.loads(out)["results"][0]["devices"]
    except (ValueError, KeyError, IndexError):
        return []


# --- nvlink_speeds_mbps: NVML's per-link speed, every active link.
SLOW = T + "/gb200-tray-slow-link.json"
want = ["0-17:53125", "0-17:53125", "0-4:53125,5:26562,6-17:53125", "0-17:53125"]
for extra in ({}, {"DMACONN_NVML_NO_BATCH": "1"}):
    got = [d.get("nvlink_speeds_mbps") for d in devices(SLOW, **extra)]
    check(got == want, "speeds of every active link (%s): %s" % (extra or "batched", got))
got = [d.get("nvlink_speeds_mbps") for d in devices(T + "/h200x2.json")]
check(got == ["0-17:26562"] * 2, "the recorded H200 pair: 26562 MB/s on links 0-17: %s" % got)
# Inactive links and links NVML gives no speed for are not listed.
got = [d.get("nvlink_speeds_mbps") for d in devices(T + "/a100-pcie-4.json")]
check(got == [None] * 4, "no active link, no speeds: %s" % got)
got = [d.get("nvlink_speeds_mbps") for d in devices(T + "/hgx-h100-8.json")]
check(got == [None] * 8, "a recording without speeds has none: %s" % got)
# Recorded and replayed again: the same speeds.
rec = os.path.join(TMP, "slow.json")
st, _, err = run("--replay", SLOW, "--record", rec)
got = [d.get("nvlink_speeds_mbps") for d in devices(rec)]
check(st == 0 and got == want, "--record keeps every link's speed (%s %s): %s" % (st, err.strip(), got))

sys.exit(1 if failures else 0)
