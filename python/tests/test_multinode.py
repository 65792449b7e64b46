# SPDX-License-Identifier: BSD-3-Clause
"""global_matrix(): the multi-node rule without MPI, on hand-made records and
on records that ranks detected from replayed nodes (tests/mpi/topologies,
the nodes of the MPI test: the expectations are the same)."""

from __future__ import annotations

import json
import os
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional

from _support import child_env, needs_replay, run_python

import dmaconn

MPI_TOPO = Path(__file__).resolve().parents[2] / "tests" / "mpi" / "topologies"
CLUSTER = "5e2a9c41-7b3d-4f60-a1e8-92c4d0b7f3a6"


def gpu(uuid: str, links: int = 18, state: str = "completed", status: str = "NVML_SUCCESS",
        cluster: Optional[str] = CLUSTER, clique: str = "32766") -> Dict[str, str]:
    dev = {"uuid": uuid, "name": "GPU", "nvlink_switch_links": str(links), "fabric_state": state}
    if state == "completed":
        dev.update(fabric_status=status, cluster_uuid=cluster or "", clique_id=clique)
    return dev


def node_record(host: str, devs: List[Dict[str, str]], value: int = 18, **extra: Any) -> Dict[str, Any]:
    n = len(devs)
    rec = {"host": host, "device_type": "cuda", "connection_type": "nvlink",
           "matrix": [[0 if i == j else value for j in range(n)] for i in range(n)],
           "devices": devs, "warnings": [], "contribute": list(range(n)), "view": None, "error": None}
    rec.update(extra)
    return rec


def blocks(groups: List[Any], value: int) -> List[List[int]]:
    n = len(groups)
    return [[value if i != j and groups[i] is not None and groups[i] == groups[j] else 0
             for j in range(n)] for i in range(n)]


class RuleTest(unittest.TestCase):
    def test_one_clique_across_nodes(self) -> None:
        a = node_record("a", [gpu("GPU-a0"), gpu("GPU-a1")])
        b = node_record("b", [gpu("GPU-b0", links=16), gpu("GPU-b1")])
        g = dmaconn.global_matrix([a, b])
        # Across nodes the smaller switch-link count; within b, b's own matrix.
        self.assertEqual(g.matrix, [[0, 18, 16, 18], [18, 0, 16, 18], [16, 16, 0, 18], [18, 18, 18, 0]])
        self.assertEqual(g.warnings, [])
        self.assertEqual(g.devices[2], {"ordinal": 2, "rank": 1, "host": "b", "node": 1,
                                        "local_ordinal": 0, **gpu("GPU-b0", links=16)})

    def test_what_disconnects_nodes(self) -> None:
        cases = {
            "other clique": gpu("GPU-b0", clique="7"),
            "other cluster": gpu("GPU-b0", cluster="11111111-2222-3333-4444-555555555555"),
            "zero cluster": gpu("GPU-b0", cluster="00000000-0000-0000-0000-000000000000"),
            "in progress": gpu("GPU-b0", state="in_progress"),
            "failed": gpu("GPU-b0", status="NVML_ERROR_UNKNOWN"),
            "no switch links": gpu("GPU-b0", links=0),
            "no fabric facts": {"uuid": "GPU-b0", "nvlink_switch_links": "18"},
        }
        for why, dev in cases.items():
            with self.subTest(why):
                a = node_record("a", [gpu("GPU-a0")])
                b = node_record("b", [dev])
                if why == "zero cluster":
                    a["devices"][0]["cluster_uuid"] = dev["cluster_uuid"]
                self.assertEqual(dmaconn.global_matrix([a, b]).matrix, [[0, 0], [0, 0]])

    def test_p2p_counts_one(self) -> None:
        a = node_record("a", [gpu("GPU-a0")], connection_type="p2p")
        b = node_record("b", [gpu("GPU-b0")], connection_type="p2p")
        self.assertEqual(dmaconn.global_matrix([a, b]).matrix, [[0, 1], [1, 0]])
        b["devices"][0]["nvlink_switch_links"] = "0"  # registered, but no switch link is up
        self.assertEqual(dmaconn.global_matrix([a, b]).matrix, [[0, 0], [0, 0]])

    def test_one_gpu_per_rank_from_a_full_view(self) -> None:
        # torchrun: every rank sees the node's GPUs and contributes its own.
        devs = [gpu(f"GPU-a{i}") for i in range(4)]
        recs = [node_record("a", devs, value=18, contribute=[i]) for i in range(4)]
        recs[2]["matrix"][2][3] = recs[2]["matrix"][3][2] = 5  # rank 2's view decides its rows
        g = dmaconn.global_matrix(recs)
        self.assertEqual(g.matrix[2][3], 5)
        self.assertEqual(g.matrix[3][2], 18)  # rank 3's own view
        self.assertEqual([d["local_ordinal"] for d in g.devices], [0, 1, 2, 3])
        self.assertEqual({d["node"] for d in g.devices}, {0})
        self.assertEqual(g.warnings, [])

    def test_node_view_pairs_ranks_that_see_one_gpu(self) -> None:
        view = {"keys": ["GPU-a0", "GPU-a1"], "matrix": [[0, 12], [12, 0]]}
        r0 = node_record("a", [gpu("GPU-a0")], view=view)
        r1 = node_record("a", [gpu("GPU-a1")], view=view)
        self.assertEqual(dmaconn.global_matrix([r0, r1]).matrix, [[0, 12], [12, 0]])
        # Without a view nobody saw both: 0, and a warning says so.
        r0["view"] = r1["view"] = None
        g = dmaconn.global_matrix([r0, r1])
        self.assertEqual(g.matrix, [[0, 0], [0, 0]])
        self.assertEqual(g.warnings, ["ranks 0 and 1 share node a but neither saw both's devices; "
                                      "their devices count as unconnected"])

    def test_the_same_gpu_twice(self) -> None:
        devs = [gpu("GPU-a0"), gpu("GPU-a1")]
        g = dmaconn.global_matrix([node_record("a", devs), node_record("a", devs)])
        self.assertEqual(g.matrix, [[0, 18, 0, 18], [18, 0, 18, 0], [0, 18, 0, 18], [18, 0, 18, 0]])
        self.assertEqual(len(g.warnings), 1)
        self.assertIn("a: 2 devices are contributed by more than one rank (GPU-a0 by ranks 0 and 1)",
                      g.warnings[0])

    def test_failures_become_warnings(self) -> None:
        ok = node_record("a", [gpu("GPU-a0")], warnings=["cuda/nvlink: something"])
        bad = node_record("b", [], error="no such file")
        view_bad = node_record("c", [gpu("GPU-c0")], view={"error": "it broke"})
        g = dmaconn.global_matrix([bad, ok, view_bad])
        self.assertEqual(len(g.matrix), 2)
        self.assertEqual(g.devices[0]["rank"], 1)
        self.assertEqual(g.devices[0]["node"], 1)  # nodes count every rank's host
        self.assertEqual(g.warnings, [
            "rank 0 (b): cuda/nvlink detection failed: no such file; it contributes no devices",
            "rank 1 (a): cuda/nvlink: something",
            "rank 2 (c): detecting every device of its node failed: it broke; its devices count as "
            "unconnected to other ranks' devices on that node",
        ])

    def test_records_must_agree(self) -> None:
        with self.assertRaises(ValueError):
            dmaconn.global_matrix([])
        with self.assertRaises(ValueError):
            dmaconn.global_matrix([node_record("a", []), node_record("b", [], connection_type="p2p")])

    def test_records_are_plain_data(self) -> None:
        rec = dmaconn.rank_record("cuda", "nvlink")  # this process's replayed switch2.json
        self.assertEqual(json.loads(json.dumps(rec)), rec)
        self.assertEqual(rec["contribute"], [0, 1])
        with self.assertRaises(ValueError):
            dmaconn.rank_record("cuda", "nvlink", devices=[2])
        self.assertIn("no DMA connectivity detector", dmaconn.rank_record("cuda", "bogus")["error"])


# Prints this "rank"'s record: DMACONN_REPLAY and CUDA_VISIBLE_DEVICES come
# from the environment, as under a launcher.
_RECORD = r"""
import json, sys
import dmaconn
print(json.dumps(dmaconn.rank_record(sys.argv[1], sys.argv[2], node_view=sys.argv[3] == "1")))
"""


@needs_replay
class ReplayedNodesTest(unittest.TestCase):
    def record(self, replay: str, connection: str = "nvlink", node_view: bool = False,
               cvd: Optional[str] = None) -> Dict[str, Any]:
        path = replay if os.path.isabs(replay) else str(MPI_TOPO / replay)
        proc = run_python(_RECORD, child_env(path, CUDA_VISIBLE_DEVICES=cvd, DMACONN_QUIET="1"),
                          "cuda", connection, "1" if node_view else "0")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        return json.loads(proc.stdout)

    def test_five_nodes(self) -> None:
        recs = [self.record(f"tray-{x}.json") for x in "abcde"]
        g = dmaconn.global_matrix(recs)
        self.assertEqual(g.matrix, blocks(["x"] * 8 + ["c"] * 4 + [None] * 8, 18))
        # tray-d's four GPUs share one cause: one warning with a count.
        self.assertEqual(len(g.warnings), 2)
        self.assertTrue(g.warnings[0].startswith("rank 3 (tray-d): cuda/nvlink: GPU 0 (0008:01:00.0): "
                                                 "NVSwitch fabric registration is in_progress"))
        self.assertTrue(g.warnings[0].endswith("(and 3 more like it)"))
        self.assertTrue(g.warnings[1].startswith("rank 4 (tray-e): cuda/nvlink: nvmlInit_v2 failed"))
        self.assertEqual(g.devices[12]["fabric_state"], "in_progress")
        self.assertEqual([d["host"] for d in g.devices[::4]], [f"tray-{x}" for x in "abcde"])

    def test_fabric_facts_from_the_legacy_call(self) -> None:
        rec = self.record("tray-b-legacy.json")
        for dev in rec["devices"]:
            facts = tuple(dev[k] for k in ("fabric_state", "fabric_status", "cluster_uuid", "clique_id"))
            self.assertEqual(facts, ("completed", "NVML_SUCCESS", CLUSTER, 32766))
        g = dmaconn.global_matrix([self.record("tray-a.json"), rec])
        self.assertEqual(g.matrix, blocks(["x"] * 8, 18))

    def test_rank_per_gpu_needs_the_node_view(self) -> None:
        recs = [self.record("tray-a.json", node_view=True, cvd=str(i)) for i in range(2)]
        recs += [self.record("tray-b.json", node_view=True, cvd=str(i)) for i in range(2)]
        self.assertEqual(len(recs[0]["view"]["keys"]), 4)
        g = dmaconn.global_matrix(recs)
        self.assertEqual(g.matrix, blocks(["x"] * 4, 18))
        self.assertEqual(g.warnings, [])
        self.assertEqual([d["pci_bus_id"] for d in g.devices],
                         ["0008:01:00.0", "0009:01:00.0", "0008:01:00.0", "0009:01:00.0"])

    def test_a_rank_that_cannot_detect(self) -> None:
        g = dmaconn.global_matrix([self.record("tray-a.json"), self.record("/nonexistent/tray-x.json")])
        self.assertEqual(g.matrix, blocks(["a"] * 4, 18))
        self.assertEqual(len(g.warnings), 1)
        self.assertIn("rank 1 (replay:/nonexistent/tray-x.json): cuda/nvlink detection failed", g.warnings[0])

    def test_host_id(self) -> None:
        proc = run_python("import dmaconn; print(dmaconn.host_id())",
                          child_env(str(MPI_TOPO / "tray-c.json")))
        self.assertEqual(proc.stdout.decode().strip(), "tray-c")


if __name__ == "__main__":
    unittest.main()
