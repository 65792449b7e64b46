#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What placement adds to a detection: bench/placement (C, in process) on the
replayed 8-GPU, 8-NIC DGX H100 of tests/topologies-placement/, three ways:

  - the placement itself, after a fresh cuda/nvlink detection;
  - the detection with and without the NVML placement queries discovery
    makes (the same machine with nvmlDeviceGetCpuAffinityWithinScope,
    nvmlDeviceGetMemoryAffinity and nvmlDeviceGetNumaNodeId listed missing:
    the difference of the medians is their cost in the replay);
  - the placement on this machine's own /sys (no replay), for the cost of
    the walk of a real /sys/devices.

Medians and quartiles in microseconds; prints a table and writes
placement.json into --out.  No timing is asserted.

    python3 bench/placement.py [--build build] [--rounds 300] [--out DIR]
"""
import argparse
import json
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MACHINE = os.path.join(HERE, "..", "tests", "topologies-placement", "dgx-h100-8nic.json")
HIDDEN = ["nvmlDeviceGetCpuAffinityWithinScope", "nvmlDeviceGetMemoryAffinity", "nvmlDeviceGetNumaNodeId"]


def run(binary, rounds, replay):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DMACONN_") and k != "CUDA_VISIBLE_DEVICES"}
    env["DMACONN_QUIET"] = "1"
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    if replay:
        env["DMACONN_REPLAY"] = replay
    out = subprocess.run([binary, str(rounds)], capture_output=True, text=True, env=env, check=True, timeout=600)
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--out", default=HERE)
    a = ap.parse_args()
    binary = os.path.join(a.build, "bench", "placement")
    with open(MACHINE) as f:
        doc = json.load(f)
    doc["nvml"]["missing_functions"] = HIDDEN
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
        hidden = f.name
    try:
        results = {"replay": run(binary, a.rounds, os.path.abspath(MACHINE)),
                   "replay_without_placement_queries": run(binary, a.rounds, hidden),
                   "live_sysfs": run(binary, a.rounds, None)}
    finally:
        os.unlink(hidden)
    print("%-34s %7s %5s %22s %22s" % ("machine", "devices", "nics", "detect us (p25/med/p75)",
                                        "placement us (p25/med/p75)"))
    for name, r in results.items():
        print("%-34s %7d %5d %22s %22s" % (name, r["devices"], r["nics"],
                                            "/".join("%.0f" % r["detect_us"][q] for q in ("p25", "median", "p75")),
                                            "/".join("%.0f" % r["placement_us"][q] for q in ("p25", "median", "p75"))))
    queries = results["replay"]["detect_us"]["median"] - results["replay_without_placement_queries"]["detect_us"]["median"]
    added = results["replay"]["placement_us"]["median"] + max(queries, 0)
    print("added to a detection (median placement + NVML queries in discovery): %.0f us" % added)
    results["added_us"] = added
    with open(os.path.join(a.out, "placement.json"), "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
