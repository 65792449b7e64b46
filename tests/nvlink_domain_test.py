#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The multi-node NVLink domain is decided once: the merge (dmaconn_merge(),
through Python's global_matrix()) and --format slurm-topology must agree,
on the same two nodes' facts, whether their GPUs share one.  Each case
changes one fact of node b's GPU from a good one (registered with success,
cluster UUID and clique of node a's); the merge's cross-node entry is
non-zero exactly when the Slurm lines put both nodes in one block.  The
facts each decide by dmaconn_nvlink_domain() are checked against its
status codes as well.

usage: nvlink_domain_test.py LIBRARY CLI
"""
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile

from harness import Report, clean_env

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CLUSTER = "5e2a9c41-7b3d-4f60-a1e8-92c4d0b7f3a6"
OTHER = "0b9f1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d"
ZERO = "00000000-0000-0000-0000-000000000000"
GOOD = {"fabric_state": "completed", "fabric_status": "NVML_SUCCESS", "cluster_uuid": CLUSTER, "clique_id": 5}
ABSENT = object()
# (what changes in node b's GPU, dmaconn_domain_status of it)
CASES = [
    ({}, "MEMBER"),
    ({"fabric_status": "SUCCESS"}, "MEMBER"),
    ({"clique_id": 7}, "MEMBER"),
    ({"cluster_uuid": OTHER}, "MEMBER"),
    ({"cluster_uuid": CLUSTER.replace("-", "").upper()}, "MEMBER"),
    ({"fabric_state": ABSENT, "fabric_status": ABSENT, "cluster_uuid": ABSENT, "clique_id": ABSENT}, "NO_FABRIC"),
    ({"fabric_state": "not_supported"}, "NO_FABRIC"),
    ({"fabric_state": "in_progress"}, "NOT_REGISTERED"),
    ({"fabric_status": "NVML_ERROR_UNKNOWN"}, "FAILED"),
    ({"fabric_status": ABSENT}, "FAILED"),
    ({"cluster_uuid": ABSENT}, "NO_ID"),
    ({"cluster_uuid": "5e2a9c41"}, "NO_ID"),
    ({"clique_id": "x"}, "NO_ID"),
    ({"clique_id": -1}, "NO_ID"),
    ({"cluster_uuid": ZERO}, "ZERO_CLUSTER"),
    ({"clique_id": 0}, "ZERO_CLIQUE"),
]


def device(bus, change):
    dev = {"ordinal": 0, "name": "NVIDIA GB200", "pci_bus_id": bus, "uuid": "GPU-" + bus.replace(":", ""),
           "nvlink_switch_links": 18, **GOOD, **change}
    return {k: v for k, v in dev.items() if v is not ABSENT}


def header_statuses():
    with open(os.path.join(REPO, "include", "dmaconn.h"), encoding="utf-8") as f:
        text = f.read()
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"\bDMACONN_DOMAIN_(\w+) = (\d+)", text)}


def text(value):
    return None if value is ABSENT else str(value).encode()


def main():
    lib_path, cli = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    report = Report()
    lib = ctypes.CDLL(lib_path)
    statuses = header_statuses()
    domain = getattr(lib, "dmaconn_nvlink_domain", None)
    report.check(domain is not None and statuses, "the library decides the multi-node domain (dmaconn_nvlink_domain)")
    if domain is not None:
        domain.restype = ctypes.c_int
        domain.argtypes = [ctypes.c_char_p] * 4 + [ctypes.c_void_p, ctypes.c_void_p]
    sys.path.insert(0, os.path.join(REPO, "python"))
    os.environ["DMACONN_LIBRARY"] = lib_path
    import dmaconn  # noqa: E402  (after the library is named)

    env = clean_env({"DMACONN_QUIET": "1"})
    with tempfile.TemporaryDirectory() as tmp:
        for change, want in CASES:
            what = json.dumps({k: ("absent" if v is ABSENT else v) for k, v in change.items()}) or "{}"
            if domain is not None:
                b = device("0009:01:00.0", change)
                got = domain(*(text(b.get(k, ABSENT)) for k in ("fabric_state", "fabric_status", "cluster_uuid",
                                                               "clique_id")), None, None)
                report.check(got == statuses.get(want), "%s: dmaconn_nvlink_domain says %s" % (what, want),
                             "got %d" % got)
            same = change.get("cluster_uuid", CLUSTER) in (CLUSTER, CLUSTER.replace("-", "").upper()) and \
                change.get("clique_id", 5) == 5
            for both in (False, True):
                devs = {"a": device("0008:01:00.0", change if both else {}), "b": device("0009:01:00.0", change)}
                label = "%s on %s" % (what, "both nodes" if both else "node b")
                records = [{"host": h, "device_type": "cuda", "connection_type": "nvlink", "matrix": [[0]],
                            "devices": [d], "warnings": [], "contribute": [0], "view": None, "error": None}
                           for h, d in sorted(devs.items())]
                merged = dmaconn.global_matrix(records).matrix[0][1] > 0
                paths = []
                for h, d in sorted(devs.items()):
                    doc = {"version": 1, "results": [{"device_type": "cuda", "connection_type": "nvlink",
                                                       "matrix": [[0]], "devices": [d], "pairs": [],
                                                       "warnings": []}]}
                    paths.append(os.path.join(tmp, h + ".json"))
                    with open(paths[-1], "w") as f:
                        json.dump(doc, f)
                out = subprocess.run([cli, "--format", "slurm-topology"] + paths, env=env, capture_output=True,
                                     text=True).stdout
                together = any(re.fullmatch(r"BlockName=\S+ Nodes=a,b", line) for line in out.splitlines())
                report.check(merged == together, "%s: the merge (%s) and the Slurm blocks (%s) agree"
                             % (label, "linked" if merged else "apart", "one block" if together else "apart"),
                             out.strip())
                report.check(merged == (want == "MEMBER" and (both or same)),
                             "%s: linked exactly when both are members of one domain" % label)
    return report.done()


if __name__ == "__main__":
    sys.exit(main())
