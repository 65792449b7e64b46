# SPDX-License-Identifier: BSD-3-Clause
"""global_matrix() for cuda/multicast: GPUs of different nodes share a
multicast object only in one NVLink domain (cluster UUID and multicast
clique) with IMEX ready on both nodes; every 0 says why and names the rank,
host and GPU that caused it.  Hand-made records, then records that ranks
make from the GB200 trays of tests/mpi/topologies/multicast."""

from __future__ import annotations

import json
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional

from _support import child_env, needs_replay, run_python

import dmaconn

MULTICAST_TOPO = Path(__file__).resolve().parents[2] / "tests" / "mpi" / "topologies" / "multicast"
RACK_A = "5e2a9c41-7b3d-4f60-a1e8-92c4d0b7f3a6"
RACK_B = "0b9d6f1e-3c58-4a27-9e40-7d1c2a86f5b3"
READY = {"reason": None, "text": "/dev/nvidia-caps-imex-channels/channel0 (major 234) opens for reading and writing"}
NO_CHANNEL = {"reason": "imex_channel_missing", "text": "no IMEX channel"}


def gpu(bus: str, cluster: str = RACK_A, clique: int = 5, supported: int = 1,
        reason: Optional[str] = None) -> Dict[str, Any]:
    dev = {"uuid": "GPU-" + bus, "pci_bus_id": bus, "multicast_supported": supported, "cluster_uuid": cluster,
           "clique_id": 32766, "multicast_clique_id": clique}
    if reason:
        dev["multicast_reason"] = reason
    return dev


def node(host: str, devs: List[Dict[str, Any]], imex: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    n = len(devs)
    rec = {"host": host, "device_type": "cuda", "connection_type": "multicast",
           "matrix": [[0 if i == j else 1 for j in range(n)] for i in range(n)], "devices": devs,
           "warnings": [], "contribute": list(range(n)), "view": None, "error": None}
    if imex is not None:
        rec["imex"] = imex
    return rec


def blocks(groups: List[Any]) -> List[List[int]]:
    n = len(groups)
    return [[1 if i != j and groups[i] == groups[j] else 0 for j in range(n)] for i in range(n)]


class MulticastRuleTest(unittest.TestCase):
    def reasons(self, g: dmaconn.DMAConnectivity) -> Dict[Any, Any]:
        """Every pair's (reason, reason_text); each 0 off the diagonal has one, no 1 has."""
        n = len(g.matrix)
        out = {}
        for i in range(n):
            for j in range(n):
                p = g.pair(i, j)
                if i != j and g.matrix[i][j] == 0:
                    self.assertIn("reason", p, (i, j))
                    out[i, j] = (p["reason"], p["reason_text"])
                else:
                    self.assertEqual(p, {}, (i, j))
        return out

    def test_one_domain(self) -> None:
        g = dmaconn.global_matrix([node("a", [gpu("a0"), gpu("a1")], READY), node("b", [gpu("b0"), gpu("b1")], READY)])
        self.assertEqual(g.matrix, blocks(["x"] * 4))
        self.assertEqual(self.reasons(g), {})
        self.assertEqual(g.warnings, [])

    def test_two_racks_one_clique_id(self) -> None:
        g = dmaconn.global_matrix([node("a", [gpu("a0")], READY), node("b", [gpu("b0", cluster=RACK_B)], READY)])
        self.assertEqual(g.matrix, [[0, 0], [0, 0]])
        text = f"rank 0 (a) GPU 0 (a0) is in NVLink domain {RACK_A}, rank 1 (b) GPU 0 (b0) in {RACK_B}"
        self.assertEqual(self.reasons(g), {(0, 1): ("different_cluster", text), (1, 0): ("different_cluster", text)})

    def test_what_else_keeps_nodes_apart(self) -> None:
        cases = {
            "multicast clique": (gpu("b0", clique=6), READY, "different_clique",
                                 "rank 0 (a) GPU 0 (a0) is in multicast clique 5, rank 1 (b) GPU 0 (b0) in 6"),
            "zero cluster": (gpu("b0", cluster="00000000-0000-0000-0000-000000000000"), READY, "different_cluster",
                             "rank 1 (b) GPU 0 (b0) is in no multi-node NVLink domain (cluster UUID "
                             "00000000-0000-0000-0000-000000000000)"),
            "GPU without multicast": (gpu("b0", supported=0, reason="fabric_in_progress"), READY,
                                      "fabric_in_progress",
                                      "rank 1 (b) GPU 0 (b0) cannot join a multicast object (fabric_in_progress)"),
            "no IMEX channel": (gpu("b0"), NO_CHANNEL, "imex_channel_missing",
                                "rank 1 (b) GPU 0 (b0): its node is not ready for IMEX: no IMEX channel"),
            "a record without IMEX": (gpu("b0"), None, "unknown",
                                      "rank 1 (b) GPU 0 (b0): its node is not ready for IMEX: its record says "
                                      "nothing of IMEX"),
        }
        for name, (dev, imex, code, text) in cases.items():
            with self.subTest(name):
                g = dmaconn.global_matrix([node("a", [gpu("a0")], READY), node("b", [dev], imex)])
                self.assertEqual(g.matrix, [[0, 0], [0, 0]])
                self.assertEqual(self.reasons(g), {(0, 1): (code, text), (1, 0): (code, text)})

    def test_a_node_without_imex(self) -> None:
        g = dmaconn.global_matrix([node("a", [gpu("a0"), gpu("a1")], READY), node("b", [gpu("b0"), gpu("b1")], NO_CHANNEL)])
        self.assertEqual(g.matrix, blocks(["a", "a", "b", "b"]))
        reasons = self.reasons(g)
        self.assertEqual(sorted(reasons), [(i, j) for i in range(4) for j in range(4) if (i < 2) != (j < 2)])
        for (i, j), (code, text) in reasons.items():
            self.assertEqual(code, "imex_channel_missing")
            self.assertEqual(text, f"rank 1 (b) GPU {max(i, j) - 2} (b{max(i, j) - 2}): its node is not ready for "
                                   "IMEX: no IMEX channel")
        self.assertEqual(g.warnings, ["rank 1 (b): not ready for IMEX (imex_channel_missing): no IMEX channel; "
                                      "its GPUs are 0 in cuda/multicast to other nodes' GPUs"])

    def test_an_idle_node_needs_no_imex(self) -> None:
        g = dmaconn.global_matrix([node("a", [gpu("a0"), gpu("a1")], NO_CHANNEL)])
        self.assertEqual(g.matrix, blocks(["a", "a"]))
        self.assertEqual(self.reasons(g), {})
        self.assertEqual(g.warnings, [])


@needs_replay
class ReplayedTraysTest(unittest.TestCase):
    def record(self, tray: str) -> Dict[str, Any]:
        proc = run_python(_RECORD, child_env(str(MULTICAST_TOPO / (tray + ".json")), DMACONN_QUIET="1"))
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        return json.loads(proc.stdout)

    def test_imex_in_the_records(self) -> None:
        self.assertEqual(self.record("nvl72-tray01")["imex"]["reason"], None)
        self.assertEqual(self.record("noimex-tray")["imex"]["reason"], "imex_channel_missing")
        self.assertEqual(self.record("denied-tray")["imex"]["reason"], "imex_channel_no_permission")
        self.assertEqual(self.record("idle-tray")["imex"]["reason"], "imex_module_missing")

    def test_rack_and_a_tray_without_imex(self) -> None:
        recs = [self.record(t) for t in ("nvl72-tray01", "nvl72-tray02", "noimex-tray")]
        g = dmaconn.global_matrix(recs)
        self.assertEqual(g.matrix, blocks(["a"] * 8 + ["b"] * 4))
        zeros = {(p["from"], p["to"]): p["reason"] for p in g.pairs}
        self.assertEqual(zeros, {(i, j): "imex_channel_missing" for i in range(12) for j in range(12)
                                 if (i < 8) != (j < 8)})
        self.assertIn("rank 2 (noimex-tray) GPU 1 (0009:01:00.0): its node is not ready for IMEX",
                      g.pair(1, 9)["reason_text"])


_RECORD = r"""
import json
import dmaconn
print(json.dumps(dmaconn.rank_record("cuda", "multicast")))
"""


if __name__ == "__main__":
    unittest.main()
