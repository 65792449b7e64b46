# SPDX-License-Identifier: BSD-3-Clause
"""The built-in rocm/* detectors through the binding, on a recorded KFD tree."""

from __future__ import annotations

import unittest
from pathlib import Path

from _support import needs_replay, probe

MI250X = str(Path(__file__).resolve().parents[2] / "tests" / "topologies-rocm" / "mi250x-8.json")
ORDER_ENV = {"ROCR_VISIBLE_DEVICES": None, "HIP_VISIBLE_DEVICES": None, "CUDA_VISIBLE_DEVICES": None}


@needs_replay
class RocmTest(unittest.TestCase):
    def test_infinity_fabric_and_p2p(self) -> None:
        calls = [{"type": "rocm", "conn": "infinity_fabric"}, {"type": "rocm", "conn": "p2p"}]
        env = dict(ORDER_ENV, ROCR_VISIBLE_DEVICES="0,1,6")
        links, p2p = probe(MI250X, calls, **env)
        self.assertEqual(links["result"]["matrix"], [[0, 4, 2], [4, 0, 0], [2, 0, 0]])
        self.assertEqual(p2p["result"]["matrix"], [[0, 1, 1], [1, 0, 1], [1, 1, 0]])
        self.assertEqual(links["warned"], [])
        self.assertEqual(links["result"]["devices"][2]["gfx_arch"], "gfx90a")


if __name__ == "__main__":
    unittest.main()
