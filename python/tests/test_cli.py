# SPDX-License-Identifier: BSD-3-Clause
"""``python3 -m dmaconn`` against the C tool, byte for byte."""

from __future__ import annotations

import json
import sys
import unittest
from typing import List, Optional

from _support import c_tool, child_env, data, needs_replay, run

TOPOLOGIES = ["switch2.json", "direct4.json", "init-fail.json", "odd-names.json"]
C_TOOL = c_tool()


def py_cli(args: List[str], replay: Optional[str] = None, **env: Optional[str]):
    return run([sys.executable, "-m", "dmaconn", *args], child_env(replay, **env))


def c_cli(args: List[str], replay: Optional[str] = None, **env: Optional[str]):
    assert C_TOOL is not None
    return run([C_TOOL, *args], child_env(replay, **env))


@needs_replay
class OutputTest(unittest.TestCase):
    def test_python_output(self) -> None:
        proc = py_cli(["--replay", data("switch2.json"), "-d", "cuda", "-c", "nvlink"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(
            proc.stdout.decode(),
            f"cuda/nvlink (replay of {data('switch2.json')}): 2 devices\n"
            "[0, 18]\n"
            "[18, 0]\n"
            "  0: NVIDIA H200, 0000:00:06.0, GPU-00000000-0000-4000-8000-abc000000000\n"
            "  1: NVIDIA H200, 0000:00:07.0, GPU-00000001-0000-4000-8000-abc000000001\n",
        )
        self.assertEqual(proc.stderr, b"")

    def test_python_json(self) -> None:
        proc = py_cli(["-d", "cuda", "-c", "nvlink", "--json"], data("init-fail.json"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(proc.stdout.endswith(b"}\n"))
        top = json.loads(proc.stdout)
        self.assertEqual(list(top), ["version", "dmaconn_version", "results"])
        self.assertEqual(top["version"], 1)
        [doc] = top["results"]
        self.assertEqual(list(doc), ["device_type", "connection_type", "matrix", "devices", "pairs", "warnings"])
        self.assertEqual(doc["matrix"], [[0, 0], [0, 0]])
        # Every 0 says why; NVML failed here, so the reason is "unknown".
        self.assertEqual([(p["from"], p["to"], p["reason"]) for p in doc["pairs"]], [(0, 1, "unknown"), (1, 0, "unknown")])
        self.assertEqual(doc["devices"][1]["ordinal"], 1)
        self.assertEqual(doc["devices"][1]["pci_bus_id"], "0000:00:07.0")
        self.assertEqual(len(doc["warnings"]), 1)
        self.assertEqual(proc.stderr.decode(), f"dmaconn: warning: {doc['warnings'][0]}\n")

    def test_replay_label_from_environment(self) -> None:
        proc = py_cli(["-d", "cuda", "-c", "nvlink"], data("switch2.json"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(
            proc.stdout.decode().startswith(f"cuda/nvlink (replay of {data('switch2.json')}): 2 devices\n")
        )

    def test_topo(self) -> None:
        proc = py_cli(["--topo"], data("direct4.json"), CUDA_VISIBLE_DEVICES="2,0")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.decode().splitlines()
        self.assertEqual(lines[0], f"cuda topology (replay of {data('direct4.json')}): 2 devices")
        # The GPU columns, then (no NIC recorded) the affinity columns, unknown here.
        self.assertEqual(
            lines[1:4],
            [
                "        GPU0     GPU1     CPU Affinity  NUMA Affinity  GPU NUMA ID",
                "GPU0    X        NV2      N/A           N/A            N/A        ",
                "GPU1    NV2      X        N/A           N/A            N/A        ",
            ],
        )
        self.assertTrue(
            any(line.startswith("  GPU0 -> GPU1: DMA yes; read OK, write OK, atomics OK, nvlink OK") for line in lines)
        )
        self.assertIn("NS = not supported; U = unknown.", lines)
        at = lines.index("NS = not supported; U = unknown.")
        self.assertEqual(lines[at + 2], "Multicast (cuda/multicast: one NVLink SHARP object, as symmetric memory needs):")
        self.assertEqual(len(lines), at + 5)  # one line per GPU

    def test_quiet(self) -> None:
        for args, env in [(["-q"], {}), ([], {"DMACONN_QUIET": "1"})]:
            with self.subTest(args=args, env=env):
                proc = py_cli(["--json", *args], data("init-fail.json"), **env)
                self.assertEqual(proc.returncode, 0)
                self.assertEqual(proc.stderr, b"")
                self.assertEqual(len(json.loads(proc.stdout)["results"][0]["warnings"]), 1)

    def test_usage_errors(self) -> None:
        for args in (
            ["-d", "cuda"],
            ["-c", "nvlink"],
            ["-d", "tpu", "-c", "nvlink"],
            ["--bogus"],
            ["extra"],
            ["--topo", "-c", "p2p"],
            ["--verify", "--timeout", "0"],
        ):
            with self.subTest(args=args):
                proc = py_cli(args, data("switch2.json"))
                self.assertEqual(proc.returncode, 2)
                self.assertEqual(proc.stdout, b"")
                self.assertTrue(proc.stderr.startswith(b"dmaconn: "))

    def test_help_and_version(self) -> None:
        proc = py_cli(["--help"])
        self.assertEqual(proc.returncode, 0)
        self.assertIn(b"--replay FILE", proc.stdout)
        proc = py_cli(["-V"])
        self.assertEqual(proc.returncode, 0)
        self.assertRegex(proc.stdout.decode(), r"^dmaconn \d+\.\d+\.\d+\n$")


@needs_replay
@unittest.skipIf(C_TOOL is None, "the C tool is not built (set DMACONN_BUILD_DIR)")
class SameAsCToolTest(unittest.TestCase):
    def assert_same(self, args: List[str], replay: Optional[str] = None, **env: Optional[str]) -> None:
        c = c_cli(args, replay, **env)
        py = py_cli(args, replay, **env)
        self.assertEqual(py.stdout, c.stdout)
        self.assertEqual(py.returncode, c.returncode)
        if c.returncode != 2:  # usage texts differ in the program name
            self.assertEqual(py.stderr, c.stderr)

    def test_topologies(self) -> None:
        for name in TOPOLOGIES:
            for args in (
                [],
                ["--json"],
                ["-d", "cuda", "-c", "nvlink"],
                ["-d", "CUDA", "-c", "nvlink", "-j"],
                ["-d", "cuda", "-c", "p2p", "--json"],
                ["--topo"],
                ["--topo", "-d", "cuda", "--json"],
                ["-q"],
            ):
                with self.subTest(topology=name, args=args):
                    self.assert_same(["--replay", data(name), *args])
                    self.assert_same(args, data(name))

    def test_visible_devices(self) -> None:
        for cvd in ("2,0", "3,1,0", "1", ""):
            for args in ([], ["--json"], ["--topo"]):
                with self.subTest(CUDA_VISIBLE_DEVICES=cvd, args=args):
                    self.assert_same(args, data("direct4.json"), CUDA_VISIBLE_DEVICES=cvd)

    def test_list(self) -> None:
        self.assert_same(["--list"])

    def test_failures(self) -> None:
        for args in (["-d", "cuda", "-c", "bogus"], ["-d", "cuda", "-c", "bogus", "--json"]):
            with self.subTest(args=args):
                self.assert_same(args, data("switch2.json"))
        self.assert_same([], "/nonexistent/topology.json")
        self.assert_same(["--json"], "/nonexistent/topology.json")

    def test_usage_errors(self) -> None:
        for args in (
            ["-d", "cuda"],
            ["-c", "nvlink"],
            ["-d", "tpu", "-c", "nvlink"],
            ["--topo", "-c", "nvlink"],
            ["--topo", "-d", "cuda", "-c", "p2p"],
            ["--timeout", "0"],
            ["--timeout", "x"],
        ):
            with self.subTest(args=args):
                c = c_cli(args)
                py = py_cli(args)
                self.assertEqual((py.returncode, py.stdout, py.stderr), (c.returncode, c.stdout, c.stderr))

    def test_version(self) -> None:
        self.assert_same(["--version"])

    def test_verify_without_helper(self) -> None:
        # A helper that cannot run gives the same answer everywhere.
        for args in (["--verify"], ["--verify", "--json"], ["--verify", "-d", "xpu"], ["--verify", "--timeout", "5"]):
            with self.subTest(args=args):
                self.assert_same(args, data("switch2.json"), DMACONN_VERIFY_HELPER="/nonexistent/helper")


if __name__ == "__main__":
    unittest.main()
