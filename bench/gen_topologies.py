#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes replay topologies of N NVSwitch-attached GPUs for bench/scaling.py.

Each GPU is an H200-like device: 18 active NVLink4 links, all to NVSwitches,
link 18 and up answering INVALID_ARGUMENT, fabric registration completed,
MIG off (docs/replay-format.md).  Usage:

    python3 bench/gen_topologies.py [--out DIR] [--p2p] [N ...]

Defaults: N = 1 2 4 8 16 32 64, DIR = bench/topologies.  Files are named
nvswitch-N.json.  --p2p adds the P2P answers for every ordered pair (only
the cuda/p2p detector reads them; they make a 64-GPU file ~0.5 MB).
"""

import argparse
import json
import os
import sys

DEFAULT_COUNTS = (1, 2, 4, 8, 16, 32, 64)
LINKS = 18


def bus_id(i, digits=8):
    # One PCI bus per GPU: 0000:XX:00.0, the next domain after 240 of them.
    return "%0*X:%02X:00.0" % (digits, i // 240, 0x10 + i % 240)


P2P_ANSWER = {"read": "OK", "write": "OK", "nvlink": "OK", "atomics": "OK", "pci": "NS",
              "common_ancestor": "SYSTEM"}


def p2p_row(i, n):
    """Device i's version 2 "p2p_row": answer 0 towards every other device."""
    parts = []
    if i:
        parts.append("0" if i == 1 else "0*%d" % i)
    parts.append("-")
    if n - i - 1:
        parts.append("0" if n - i - 1 == 1 else "0*%d" % (n - i - 1))
    return ",".join(parts)


def topology(n, p2p=False, rows=False):
    """rows: the P2P answers as version 2 rows (docs/replay-format.md), a
    few bytes per device, instead of an object per pair."""
    devices = []
    for i in range(n):
        dev = {
            "name": "NVIDIA H200",
            "uuid": "GPU-%08x-0000-4000-8000-%012x" % (0xbe9c0000 + n, i),
            "pci": {"bus_id": bus_id(i), "pci_device_id": 590680286},
            "cuda_compute_capability": [9, 0],
            "mig_mode": [0, 0],
            "fabric": {"state": 3, "status": "SUCCESS",
                       "cluster_uuid": "00000000-0000-0000-0000-000000000000",
                       "clique_id": 0, "health_mask": 0},
            "nvlink": [{"repeat": LINKS, "state": 1, "version": 6, "remote_type": "SWITCH",
                        "remote_pci": {"bus_id": "FFFFFFFF:FF:FF.0"}, "speed_mbps": 26562}],
        }
        if p2p and rows:
            dev["p2p_row"] = p2p_row(i, n)
        elif p2p:
            dev["p2p"] = [dict(P2P_ANSWER, peer=j) for j in range(n) if j != i]
        devices.append(dev)
    nvml_extra = {"p2p_answers": [P2P_ANSWER]} if p2p and rows else {}
    return {
        "dmaconn_topology": 2 if rows else 1,
        "description": "%d GPU%s on NVSwitches, %d NVLinks each (synthetic, bench/gen_topologies.py)"
                       % (n, "" if n == 1 else "s", LINKS),
        "pci_gpus": [bus_id(i, 4) for i in range(n)],
        "nvml": {
            "library": "libnvidia-ml.so.1",
            "driver_version": "580.159.04",
            "nvml_version": "13.580.159.04",
            "cuda_driver_version": 13000,
            **nvml_extra,
            "devices": devices,
        },
    }


def write_all(out, counts=DEFAULT_COUNTS, p2p=False):
    """Writes nvswitch-N.json for each N into out; returns {N: path}."""
    os.makedirs(out, exist_ok=True)
    paths = {}
    for n in counts:
        path = os.path.join(out, "nvswitch-%d.json" % n)
        with open(path, "w") as f:
            json.dump(topology(n, p2p), f, indent=1)
            f.write("\n")
        paths[n] = path
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "topologies"))
    ap.add_argument("--p2p", action="store_true", help="add P2P answers for every pair")
    ap.add_argument("counts", nargs="*", type=int, default=list(DEFAULT_COUNTS))
    args = ap.parse_args(argv)
    if any(n < 1 or n > 4096 for n in args.counts):
        ap.error("GPU counts must be 1..4096")
    for n, path in write_all(args.out, args.counts, args.p2p).items():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
