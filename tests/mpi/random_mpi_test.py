#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Multi-node detection on random NVSwitch trays (fixed seeds): K ranks,
each with a replay file of 1 to 4 GPUs whose fabric registration, cluster
UUID and clique vary, run `dmaconn --mpi -d cuda -c nvlink --json`.  The
node-wide matrix must:
  - list every rank's GPUs, rank by rank, as each rank alone lists them;
  - equal, within a rank, what that rank's file gives without MPI;
  - join GPUs of two ranks only where both registered with the fabric
    (state COMPLETED, status SUCCESS) into one cluster and clique, and
    count no more links than either has active to NVSwitches.

usage: random_mpi_test.py --mpiexec MPIEXEC --cli DMACONN [--seed S] [--count N]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import run_mpi  # noqa: E402
from harness import finish  # noqa: E402

CLUSTERS = ["5e2a9c41-7b3d-4f60-a1e8-92c4d0b7f3a6", "0b9f1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d"]


def tray(r, rank):
    devs = []
    for k in range(r.randrange(1, 5)):
        up = r.choice([18, 18, 18, 9, 0])
        fabric = {"state": r.choice([3, 3, 3, 3, 2, 1]), "status": r.choice(["SUCCESS"] * 5 + ["UNKNOWN"]),
                  "cluster_uuid": r.choice(CLUSTERS), "clique_id": r.choice([32766, 32766, 7])}
        links = [{"repeat": up, "state": 1, "version": 5, "remote_type": "SWITCH",
                  "remote_pci": {"bus_id": "FFFFFFFF:FF:FF.0"}}] if up else []
        if up < 18:
            links.append({"repeat": 18 - up, "state": 0, "version": 5})
        devs.append({"name": "NVIDIA GB200", "uuid": "GPU-%08x-0000-4000-8000-%012x" % (rank, r.getrandbits(48)),
                     "pci": {"bus_id": "%04X:01:00.0" % (8 * rank + k)}, "cuda_compute_capability": [10, 0],
                     "fabric": fabric, "nvlink": links,
                     "p2p": [{"peer": j, "read": "OK", "write": "OK", "nvlink": "OK", "atomics": "OK",
                              "common_ancestor": "SYSTEM"} for j in range(4) if j != k]})
    for d in devs:
        d["p2p"] = [p for p in d["p2p"] if p["peer"] < len(devs)]
    return {"dmaconn_topology": 2, "host": "tray-%d" % rank, "environment": {"CUDA_VISIBLE_DEVICES": None},
            "nvml": {"library": "libnvidia-ml.so.1", "driver_version": "580.95.05", "devices": devs}}


def active(dev):
    return sum(l.get("repeat", 1) for l in dev["nvlink"] if l.get("state") == 1)


def registered(dev):
    f = dev["fabric"]
    return f["state"] == 3 and f["status"] == "SUCCESS"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--count", type=int, default=12)
    args = ap.parse_args()
    open_mpi = run_mpi.is_open_mpi(args.mpiexec)
    problems, joined = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in range(args.count):
            r = random.Random("%d/%d" % (args.seed, case))
            files, docs = [], []
            for rank in range(r.choice([2, 2, 3, 4])):
                files.append(os.path.join(tmp, "case%d-rank%d.json" % (case, rank)))
                docs.append(tray(r, rank))
                with open(files[-1], "w") as f:
                    json.dump(docs[-1], f)
            name = "case %d (seed %d)" % (case, args.seed)
            sc = {"ranks": [{"replay": f} for f in files], "cli": ["--mpi", "-d", "cuda", "-c", "nvlink", "--json"]}
            status, out, err = run_mpi.launch(args, sc, [args.cli] + sc["cli"], open_mpi)
            lines = [l for l in (out or "").splitlines() if l.strip()]
            if status != 0 or len(lines) != 1:
                problems.append("%s: exit %s, %d lines: %s" % (name, status, len(lines), (err or "")[-500:]))
                continue
            whole = json.loads(lines[0])["results"][0]
            m = whole["matrix"]
            # Each rank alone, without MPI.
            alone, owner = [], []
            for rank, f in enumerate(files):
                env = run_mpi.environment({"ranks": []}, open_mpi)
                env["DMACONN_QUIET"] = "1"
                p = subprocess.run([args.cli, "--replay", f, "-d", "cuda", "-c", "nvlink", "--json"], env=env,
                                   capture_output=True, text=True, timeout=120)
                res = json.loads(p.stdout)["results"][0]
                alone.append(res)
                owner += [(rank, i) for i in range(len(res["matrix"]))]
            if len(m) != len(owner):
                problems.append("%s: %d devices, the ranks list %d" % (name, len(m), len(owner)))
                continue
            for a, (ra, ia) in enumerate(owner):
                for b, (rb, ib) in enumerate(owner):
                    if ra == rb:
                        if m[a][b] != alone[ra]["matrix"][ia][ib]:
                            problems.append("%s: [%d][%d] = %d, rank %d alone gives %d" % (
                                name, a, b, m[a][b], ra, alone[ra]["matrix"][ia][ib]))
                        continue
                    if not m[a][b]:
                        continue
                    joined += 1
                    # Ordinals follow NVML order here: no visibility variable.
                    da, db = docs[ra]["nvml"]["devices"][ia], docs[rb]["nvml"]["devices"][ib]
                    same = (da["fabric"]["cluster_uuid"], da["fabric"]["clique_id"]) == \
                        (db["fabric"]["cluster_uuid"], db["fabric"]["clique_id"])
                    if not (registered(da) and registered(db) and same):
                        problems.append("%s: [%d][%d] = %d across ranks %d and %d without one registered "
                                        "clique: %s, %s" % (name, a, b, m[a][b], ra, rb, da["fabric"], db["fabric"]))
                    if m[a][b] > min(active(da), active(db)):
                        problems.append("%s: [%d][%d] = %d, more than the active NVSwitch links (%d, %d)" % (
                            name, a, b, m[a][b], active(da), active(db)))
    if not joined:
        problems.append("no cross-node pair joined")
    return finish(problems, "%d random multi-node cases (seed %d), %d cross-node pairs joined" % (
        args.count, args.seed, joined))


if __name__ == "__main__":
    sys.exit(main())
