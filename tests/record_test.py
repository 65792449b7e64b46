#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A recording holds the answers the detectors used: every topology of the
test bed (tests/topologies*/, examples/) is replayed and recorded, and the
recording must replay to the same JSON for every built-in pair, under the
visible-device variables the recording pinned and, for files without
injected faults or failing calls, under others (CUDA_VISIBLE_DEVICES=1,0
live): a failure on a device the recording's environment shows can end a
detection early, and what it did not ask is not in the recording.

The test stand-in (BUILD/tests/libdmaconn_replay_faults.so) is in front of
the replay component in both runs, so that a file's injected faults and a
physically described Level Zero node are what the detectors see when
recording; the recording then holds their answers as plain values and
errors.  usage: record_test.py BUILD_DIR [FILE...] (the files instead of
the test bed's, e.g. from gen_random_topologies.py)
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

from harness import finish

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIRS = [("cuda", "nvlink"), ("cuda", "p2p"), ("rocm", "infinity_fabric"), ("rocm", "p2p"),
         ("xpu", "p2p"), ("xpu", "xelink")]


def env(stand_in, extra=None):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("DMACONN_", "CUDA_", "ROCR_", "HIP_", "ZE_", "GPU_DEVICE"))}
    e.update(DMACONN_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1", DMACONN_ZE_LIBRARY="/nonexistent/libze_loader.so.1",
             DMACONN_ROCM_SMI_LIBRARY="/nonexistent/librocm_smi64.so.1", DMACONN_SYSFS_ROOT="/nonexistent",
             DMACONN_REPLAY_LIBRARY=stand_in)
    e.update(extra or {})
    return e


def run(cli, args, e):
    wrapper = os.environ.get("DMACONN_TEST_WRAPPER", "").split()
    p = subprocess.run(wrapper + [cli] + args, env=e, capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def main():
    build = os.path.abspath(sys.argv[1])
    cli = os.path.join(build, "dmaconn")
    stand_in = os.path.join(build, "tests", "libdmaconn_replay_faults.so")
    files = sys.argv[2:] or sorted(glob.glob(os.path.join(REPO, "tests", "topologies*", "*.json")) +
                                   glob.glob(os.path.join(REPO, "examples", "*.json")))
    files = [f for f in files if os.path.basename(f) != "cases.json"]
    problems, checked = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        rec = os.path.join(tmp, "rec.json")
        for f in files:
            name = os.path.relpath(f, REPO)
            rc, _ = run(cli, ["--replay", f, "--record", rec], env(stand_in))
            if rc != 0:
                problems.append("%s: recording exited %d" % (name, rc))
                continue
            with open(rec) as fh:
                recorded = json.load(fh)
            if "faults" in recorded.get("nvml", {}) or "faults" in recorded.get("level_zero", {}):
                problems.append("%s: the recording holds faults" % name)
            with open(f) as fh:
                source = json.load(fh)
            faults = "faults" in source.get("nvml", {}) or "faults" in source.get("level_zero", {})
            # A call that fails on some device of the node (whether the
            # file's environment shows it or not) also ends the detection early.
            _, whole = run(cli, ["--replay", f, "-q", "--json", "-d", "cuda", "-c", "p2p"],
                           env(stand_in, {"DMACONN_REPLAY_LIVE_ENV": "1"}))
            faults = faults or " failed" in whole
            lives = [None] + ([] if faults else [{"CUDA_VISIBLE_DEVICES": "1,0", "DMACONN_REPLAY_LIVE_ENV": "1"}])
            for t, c in PAIRS:
                for live in lives:
                    a = run(cli, ["--replay", f, "-q", "--json", "-d", t, "-c", c], env(stand_in, live))
                    b = run(cli, ["--replay", rec, "-q", "--json", "-d", t, "-c", c], env(stand_in, live))
                    checked += 1
                    if a != b:
                        problems.append("%s %s/%s%s: the recording replays differently:\n    %s\n    %s" % (
                            name, t, c, " (CUDA_VISIBLE_DEVICES=1,0)" if live else "", a[1][:300], b[1][:300]))
    return finish(problems, "%d topologies recorded, %d replays compared" % (len(files), checked))


if __name__ == "__main__":
    sys.exit(main())
