#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Python's global_matrix() and libdmaconn_mpi give the same result, byte
for byte, for the same ranks: every libdmaconn_mpi scenario of
scenarios.json, and every cuda/multicast one of multicast_mpi_test.py (GB200
trays with and without IMEX, two ranks of one node that see it differently),
runs as `mpiexec -np K dmaconn --mpi -d cuda -c CONN --json`,
and again as K processes that each make dmaconn.rank_record() with that
rank's replay file and CUDA_VISIBLE_DEVICES, merged by
dmaconn.global_matrix().  The matrix, every device's properties, the pairs
and the warnings must serialise to the same JSON text.

usage: merge_same_test.py --mpiexec MPIEXEC --cli DMACONN [FILTER]
(DMACONN_LIBRARY and PYTHONPATH name the library and the package.)
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from harness import Report  # noqa: E402
from run_mpi import TOPO, is_open_mpi, launch, parser  # noqa: E402
import multicast_mpi_test  # noqa: E402

import dmaconn  # noqa: E402

# One rank without MPI: as under a launcher, its environment says which
# node it replays and which GPUs it sees.
RECORD = r"""
import json, sys
import dmaconn
print(json.dumps(dmaconn.rank_record("cuda", sys.argv[1], node_view=sys.argv[2] == "1")))
"""


def python_records(sc):
    conn = sc.get("connection", "nvlink")
    # Every rank of the MPI job shares this machine's shared-memory domain,
    # so each one there detects over the whole node: the same here.
    node_view = "1" if len(sc["ranks"]) > 1 else "0"
    records = []
    for rank in sc["ranks"]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DMACONN_REPLAY", "CUDA_VISIBLE"))}
        env["DMACONN_QUIET"] = "1"
        if rank.get("replay"):
            env["DMACONN_REPLAY"] = os.path.join(TOPO, rank["replay"])
        if "cvd" in rank:
            env["CUDA_VISIBLE_DEVICES"] = rank["cvd"]
        proc = subprocess.run([sys.executable, "-c", RECORD, conn, node_view], env=env, capture_output=True,
                              text=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError("rank_record failed: " + proc.stderr)
        records.append(json.loads(proc.stdout))
    return records


def texts(result):
    return {k: json.dumps(result[k]) for k in ("device_type", "connection_type", "matrix", "devices", "pairs",
                                               "warnings")}


def main():
    args = parser(test=False).parse_args()
    with open(os.path.join(HERE, "scenarios.json")) as f:
        scenarios = [sc for sc in json.load(f) if "cli" not in sc]
    for sc in multicast_mpi_test.SCENARIOS:
        ranks = [dict({"replay": os.path.join("multicast", r["tray"] + ".json")},
                      **({"cvd": r["cvd"]} if "cvd" in r else {})) for r in sc["ranks"]]
        scenarios.append({"name": "multicast/" + sc["name"], "ranks": ranks, "connection": "multicast",
                          "n": len(multicast_mpi_test.devices(sc))})
    scenarios = [sc for sc in scenarios if args.filter in sc["name"]]
    open_mpi = is_open_mpi(args.mpiexec)
    report = Report()
    for sc in scenarios:
        conn = sc.get("connection", "nvlink")
        sc = dict(sc, cli=[])  # run_mpi's environment for a CLI scenario: warnings not quieted
        status, out, err = launch(args, sc, [args.cli, "--mpi", "-q", "-d", "cuda", "-c", conn, "--json"],
                                  open_mpi)
        problems = []
        if status != 0:
            problems.append("mpiexec exit status %s: %s" % (status, err))
        else:
            mpi = json.loads(out)["results"][0]
            py = dmaconn.global_matrix(python_records(sc)).as_dict()
            a, b = texts(mpi), texts(py)
            for key in a:
                if a[key] != b[key]:
                    problems.append("%s differs:\n  MPI:    %s\n  Python: %s" % (key, a[key], b[key]))
            # Not vacuous: the scenario has devices, and what it expects.
            if len(mpi["matrix"]) != sc["n"]:
                problems.append("MPI gave %d devices, the scenario says %d" % (len(mpi["matrix"]), sc["n"]))
        report.problems("%s (%d ranks)" % (sc["name"], len(sc["ranks"])), problems)
    report.check(report.passed + report.failed >= (20 if not args.filter else 1), "the scenarios ran")
    return report.done()


if __name__ == "__main__":
    sys.exit(main())
