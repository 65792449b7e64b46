# SPDX-License-Identifier: BSD-3-Clause
"""dmaconn.detect("cuda", "multicast") on replayed machines: typed facts, reasons."""

from __future__ import annotations

import unittest
from pathlib import Path

from _support import needs_replay, probe

MACHINES = Path(__file__).resolve().parents[2] / "tests" / "topologies-multicast"


def multicast(name: str):
    [entry] = probe(str(MACHINES / name), [{"type": "cuda", "conn": "multicast"}])
    return entry["result"]


@needs_replay
class MulticastTest(unittest.TestCase):
    def test_v4_cliques_are_typed(self) -> None:
        r = multicast("gb200-v4-multicast-cliques.json")
        self.assertEqual(r["connection_type"], "multicast")
        self.assertEqual(r["matrix"], [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]])
        dev = r["devices"][2]
        self.assertEqual(dev["multicast_supported"], 1)
        self.assertEqual(dev["multicast_clique_id"], 8)
        self.assertEqual(dev["clique_id"], 32766)
        self.assertEqual(dev["fabric_info_version"], "v4")
        self.assertEqual(dev["fabric_cliques"][1], {"type": "multicast_pointer", "id": 8})
        pair = next(p for p in r["pairs"] if (p["from"], p["to"]) == (0, 2))
        self.assertEqual(pair["reason"], "different_clique")

    def test_a_gpu_that_cannot(self) -> None:
        r = multicast("route-unhealthy.json")
        dev = r["devices"][5]
        self.assertEqual((dev["multicast_supported"], dev["multicast_reason"]), (0, "fabric_unhealthy"))
        self.assertNotIn("multicast_reason", r["devices"][0])
        reasons = {p["reason"] for p in r["pairs"] if 5 in (p["from"], p["to"])}
        self.assertEqual(reasons, {"fabric_unhealthy"})


if __name__ == "__main__":
    unittest.main()
