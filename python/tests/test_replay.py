# SPDX-License-Identifier: BSD-3-Clause
"""The built-in cuda/nvlink detector on replayed topologies, one process each."""

from __future__ import annotations

import unittest

from _support import child_env, data, needs_replay, probe, run_python

SWITCH2_MATRIX = [[0, 18], [18, 0]]
DIRECT4_MATRIX = [[0, 1, 2, 1], [1, 0, 1, 2], [2, 1, 0, 1], [1, 2, 1, 0]]
DIRECT4_UUIDS = [f"GPU-{i:08x}-0000-4000-8000-abc00000000{i}" for i in range(4)]
INIT_FAIL_WARNING = (
    "cuda/nvlink: nvmlInit_v2 failed: Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED); "
    "assuming no DMA connectivity (2 devices counted without NVML)"
)


@needs_replay
class DetectTest(unittest.TestCase):
    def test_switch_machine(self) -> None:
        [entry] = probe(data("switch2.json"))
        r = entry["result"]
        self.assertEqual(r["device_type"], "cuda")
        self.assertEqual(r["connection_type"], "nvlink")
        self.assertEqual(r["matrix"], SWITCH2_MATRIX)
        self.assertEqual(r["warnings"], [])
        self.assertEqual(entry["warned"], [])
        dev = r["devices"][0]
        self.assertEqual(dev["ordinal"], 0)
        self.assertEqual(dev["name"], "NVIDIA H200")
        self.assertEqual(dev["pci_bus_id"], "0000:00:06.0")
        self.assertEqual(dev["uuid"], "GPU-00000000-0000-4000-8000-abc000000000")
        self.assertEqual(dev["nvlink_switch_links"], 18)
        self.assertEqual(dev["fabric_state"], "completed")
        self.assertEqual(r["devices"][1]["ordinal"], 1)

    def test_direct_links(self) -> None:
        [entry] = probe(data("direct4.json"))
        self.assertEqual(entry["result"]["matrix"], DIRECT4_MATRIX)
        self.assertEqual([d["uuid"] for d in entry["result"]["devices"]], DIRECT4_UUIDS)

    def test_cuda_visible_devices_reorders(self) -> None:
        for cvd, order in [("2,0", [2, 0]), ("3,1,0", [3, 1, 0]), ("1", [1]), ("", [])]:
            with self.subTest(CUDA_VISIBLE_DEVICES=cvd):
                [entry] = probe(data("direct4.json"), CUDA_VISIBLE_DEVICES=cvd)
                r = entry["result"]
                expected = [[DIRECT4_MATRIX[i][j] for j in order] for i in order]
                self.assertEqual(r["matrix"], expected)
                self.assertEqual([d["uuid"] for d in r["devices"]], [DIRECT4_UUIDS[i] for i in order])
                self.assertEqual([d["ordinal"] for d in r["devices"]], list(range(len(order))))

    def test_cuda_visible_devices_by_uuid(self) -> None:
        [entry] = probe(
            data("direct4.json"), CUDA_VISIBLE_DEVICES=f"{DIRECT4_UUIDS[3]},{DIRECT4_UUIDS[0]}"
        )
        self.assertEqual(entry["result"]["matrix"], [[0, 1], [1, 0]])

    def test_p2p(self) -> None:
        [entry] = probe(data("switch2.json"), [{"conn": "p2p"}])
        r = entry["result"]
        self.assertEqual((r["device_type"], r["connection_type"]), ("cuda", "p2p"))
        self.assertEqual(r["matrix"], [[0, 1], [1, 0]])
        self.assertEqual([(p["from"], p["to"]) for p in r["pairs"]], [(0, 1), (1, 0)])
        for pair in r["pairs"]:
            self.assertEqual(
                {k: pair[k] for k in ("read", "write", "atomics", "nvlink", "path")},
                {"read": "OK", "write": "OK", "atomics": "OK", "nvlink": "OK", "path": "NV18"},
            )

    def test_p2p_pair_accessor(self) -> None:
        code = (
            "import dmaconn\n"
            "r = dmaconn.detect('cuda', 'p2p')\n"
            "print(r.pair(1, 0)['path'], r.pair(0, 0), r.pair(5, 1))\n"
        )
        proc = run_python(code, child_env(data("direct4.json"), CUDA_VISIBLE_DEVICES="0,2"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode(), "NV2 {} {}\n")

    def test_p2p_pairs_read_on_demand(self) -> None:
        # The list of pair dicts is made on first reading; pair() answers
        # from the library's numbered lists without it, the same facts.
        code = (
            "import dataclasses, dmaconn\n"
            "r = dmaconn.detect('cuda', 'p2p')\n"
            "one = r.pair(0, 2)\n"
            "assert '_pairs' not in r.__dict__\n"
            "pairs = r.pairs\n"
            "assert pairs is r.pairs and dataclasses.asdict(r)['pairs'] == pairs\n"
            "assert all(r.pair(p['from'], p['to']) == {k: v for k, v in p.items() if k not in ('from', 'to')}\n"
            "           for p in pairs)\n"
            "print(len(pairs), one['path'], one['nvlink_links'])\n"
        )
        proc = run_python(code, child_env(data("direct4.json")))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode(), "12 NV2 2\n")

    def test_shutdown_starts_over(self) -> None:
        code = (
            "import os, warnings, dmaconn\n"
            "warnings.simplefilter('error')\n"
            "dmaconn.register_detector('cuda', 'mine', lambda: [[0]])\n"
            "print(dmaconn.detect('cuda', 'nvlink').matrix)\n"
            "dmaconn.shutdown()\n"
            "print(('cuda', 'mine') in dmaconn.list_detectors())\n"
            "os.environ['DMACONN_REPLAY'] = os.environ['NEXT_REPLAY']\n"
            "try:\n"
            "    dmaconn.detect('cuda', 'nvlink')\n"
            "except dmaconn.DmaconnWarning as w:\n"
            "    print('warned:', w)\n"
        )
        proc = run_python(code, child_env(data("switch2.json"), NEXT_REPLAY=data("init-fail.json")))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(
            proc.stdout.decode(), f"[[0, 18], [18, 0]]\nFalse\nwarned: {INIT_FAIL_WARNING}\n"
        )
        self.assertEqual(proc.stderr, b"")

    def test_nvml_failure_warns_once_per_detection(self) -> None:
        entries = probe(
            data("init-fail.json"),
            [{}, {}, {"fresh": True}, {}, {"clear": True}, {"conn": "bogus"}],
        )
        first, cached, fresh, cached_again, cleared, bogus = entries
        r = first["result"]
        self.assertEqual(r["matrix"], [[0, 0], [0, 0]])
        self.assertEqual(r["warnings"], [INIT_FAIL_WARNING])
        self.assertEqual([d["pci_bus_id"] for d in r["devices"]], ["0000:00:06.0", "0000:00:07.0"])
        self.assertEqual(first["warned"], [INIT_FAIL_WARNING])
        self.assertEqual(cached["result"], r)
        self.assertEqual(cached["warned"], [])
        self.assertEqual(fresh["result"], r)
        self.assertEqual(fresh["warned"], [INIT_FAIL_WARNING])
        self.assertEqual(cached_again["warned"], [])
        self.assertEqual(cleared["warned"], [INIT_FAIL_WARNING])
        self.assertEqual(bogus["error"]["class"], "NoDetectorError")
        self.assertEqual(bogus["error"]["code"], -2)
        self.assertTrue(bogus["error"]["runtime"])
        for entry in entries:
            self.assertEqual(entry["other_warnings"], [])

    def test_library_does_not_print_warnings(self) -> None:
        code = (
            "import warnings, dmaconn\n"
            "warnings.simplefilter('ignore')\n"
            "print(dmaconn.detect('cuda', 'nvlink').warnings)\n"
        )
        proc = run_python(code, child_env(data("init-fail.json")))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("nvmlInit_v2 failed", proc.stdout.decode())
        self.assertEqual(proc.stderr.decode(), "")

    def test_warning_points_at_caller(self) -> None:
        code = "import dmaconn\ndmaconn.detect('cuda', 'nvlink')\n"
        proc = run_python(code, child_env(data("init-fail.json")))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(
            proc.stderr.decode().splitlines()[0], f"<string>:2: DmaconnWarning: {INIT_FAIL_WARNING}"
        )

    def test_unusable_replay_file(self) -> None:
        [entry] = probe("/nonexistent/topology.json")
        self.assertEqual(entry["error"]["class"], "ReplayError")
        self.assertEqual(entry["error"]["code"], -6)
        self.assertIn("/nonexistent/topology.json", entry["error"]["message"])


if __name__ == "__main__":
    unittest.main()
