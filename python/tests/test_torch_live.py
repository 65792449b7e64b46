# SPDX-License-Identifier: BSD-3-Clause
"""dmaconn.torch inside the installed PyTorch: c10d's own registry answers
with dmaconn's matrices.

Skipped, with the reason, where PyTorch (with c10d's DMA connectivity
registry) is not importable.  Every case runs in a fresh child process,
since c10d keeps a detector's first answer for the life of a process; the
shim is built once into a temporary cache shared by the cases, and so is a
second plug-in (data/torch_second_plugin.cpp) that registers (HIP, "p2p")
from a static initialiser, as third-party plug-ins do.
"""

from __future__ import annotations

import json
import os
import tempfile
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from _support import child_env, needs_replay, run_python

REPO = Path(__file__).resolve().parents[2]
MI300X = str(REPO / "examples" / "mi300x.json")
H200X2 = str(REPO / "examples" / "h200x2-recorded.json")
AURORA = str(REPO / "tests" / "topologies-xpu" / "aurora-6x2-recorded.json")
MI300X_LINKS = [[0 if i == j else 1 for j in range(8)] for i in range(8)]
# Aurora-like node, FLAT: ordinal k is tile k % 2 of card k // 2; Xe Link
# joins the same tile of different cards.
AURORA_XELINK = [[int(i // 2 != j // 2 and i % 2 == j % 2) for j in range(12)] for i in range(12)]
PLUGIN_MATRIX = [[0, 3], [3, 0]]

_PROBE = r"""
import json, torch
c10d = getattr(torch._C, "_distributed_c10d", None)
print(json.dumps({"version": torch.__version__,
                  "registry": hasattr(c10d, "_detect_dma_connectivity"),
                  "cuda": getattr(torch.version, "cuda", None),
                  "hip": getattr(torch.version, "hip", None)}))
"""

SECOND_PLUGIN = Path(__file__).resolve().parent / "data" / "torch_second_plugin.cpp"

_BUILD_PLUGIN = r"""
import sys, torch
from pathlib import Path
from dmaconn.torch import _shim
_shim.compile_shared(torch, Path(sys.argv[1]), Path(sys.argv[2]))
"""

# The steps in argv[1], in one process; prints what each gave as JSON.
_CHILD = r"""
import ctypes, json, sys
steps = json.loads(sys.argv[1])
import torch
DeviceType = torch._C._autograd.DeviceType
detect = torch._C._distributed_c10d._detect_dma_connectivity
out = []
for step in steps:
    kind, args, entry = step[0], step[1:], {}
    try:
        if kind == "load":
            ctypes.CDLL(args[0])
        elif kind == "import":
            import dmaconn.torch as dt
            entry["registered"] = dt.registered()
            entry["shim_error"] = dt.shim_error()
        elif kind == "register":
            import dmaconn.torch as dt
            entry["registered"] = dt.register([(getattr(DeviceType, t), c) for t, c in args[0]])
        elif kind == "python_detector":
            import dmaconn
            matrix = args[1]
            def fn(matrix=matrix):
                if matrix is None:
                    raise OSError("detector failed on purpose")
                return matrix
            dmaconn.register_detector(args[0][0], args[0][1], fn)
        elif kind == "c10d":
            want = getattr(DeviceType, args[0])
            c = detect(want, args[1])
            entry.update(device_type_ok=bool(c.device_type == want), connection_type=c.connection_type,
                         matrix=[list(row) for row in c.matrix])
        elif kind == "c10d_cuda_pairs":
            import dmaconn, dmaconn.torch as dt
            entry["pairs"] = {}
            for t, conn in dt.registered():
                if t == "CUDA":
                    c = detect(DeviceType.CUDA, conn)
                    entry["pairs"][conn] = {
                        "device_type_ok": bool(c.device_type == DeviceType.CUDA),
                        "connection_type": c.connection_type,
                        "matrix": [list(row) for row in c.matrix],
                        "dmaconn": dmaconn.detect("cuda", conn).matrix}
        elif kind == "dmaconn":
            import dmaconn
            entry["matrix"] = dmaconn.detect(args[0], args[1]).matrix
        elif kind == "cuda_state":
            entry["initialized"] = torch.cuda.is_initialized()  # before anything below asks CUDA
            entry["device_count"] = torch.cuda.device_count()
    except Exception as exc:
        entry["error"] = [type(exc).__name__, str(exc).splitlines()[0] if str(exc) else ""]
    out.append(entry)
print(json.dumps(out))
"""


def _probe_torch() -> Tuple[Optional[Dict[str, Any]], str]:
    proc = run_python(_PROBE, child_env(None))
    if proc.returncode != 0:
        lines = proc.stderr.decode(errors="replace").strip().splitlines()
        return None, "PyTorch is not importable here (" + (lines[-1] if lines else "import torch failed") + ")"
    info = json.loads(proc.stdout)
    if not info["registry"]:
        return None, f"PyTorch {info['version']} has no c10d DMA connectivity registry"
    return info, ""


TORCH, WHY_NOT = _probe_torch()


@unittest.skipIf(TORCH is None, WHY_NOT)
@needs_replay
class TorchLiveTest(unittest.TestCase):
    tmp: tempfile.TemporaryDirectory
    plugin: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory(prefix="dmaconn-torch-live-")
        source = SECOND_PLUGIN
        cls.plugin = str(Path(cls.tmp.name) / "second_plugin.so")
        proc = run_python(_BUILD_PLUGIN, cls.env(None, DMACONN_TORCH_EXCLUDE="all"), str(source), cls.plugin)
        if proc.returncode != 0:
            raise AssertionError("cannot build the second plug-in:\n" + proc.stderr.decode(errors="replace"))

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    @classmethod
    def env(cls, replay: Optional[str], **extra: Optional[str]) -> Dict[str, str]:
        extra.setdefault("DMACONN_TORCH_EXCLUDE", None)
        extra.setdefault("CUDA_VISIBLE_DEVICES", None)
        # A cache of this run's own, unless DMACONN_TORCH_CACHE names one to reuse.
        cache = os.environ.get("DMACONN_TORCH_CACHE") or str(Path(cls.tmp.name) / "cache")
        return child_env(replay, DMACONN_TORCH_CACHE=cache, DMACONN_QUIET="1", **extra)

    def run_steps(self, steps: List[List[Any]], replay: Optional[str], **extra: Optional[str]) -> List[Dict[str, Any]]:
        proc = run_python(_CHILD, self.env(replay, **extra), json.dumps(steps))
        if proc.returncode != 0:
            self.fail(proc.stderr.decode(errors="replace"))
        out = json.loads(proc.stdout)
        for step, entry in zip(steps, out):
            if step[0] in ("import", "register", "load", "dmaconn", "cuda_state", "python_detector"):
                self.assertNotIn("error", entry, step)
            if step[0] == "import":
                self.assertIsNone(entry["shim_error"])
        return out

    def check_cuda_pairs(self, cvd: Optional[str]) -> int:
        """PyTorch's assertions for (CUDA, "nvlink"), for every CUDA pair registered."""
        steps = [["import"], ["c10d_cuda_pairs"], ["cuda_state"]]
        imported, pairs, state = self.run_steps(steps, None, CUDA_VISIBLE_DEVICES=cvd)
        registered = [tuple(p) for p in imported["registered"]]
        self.assertNotIn(("CUDA", "nvlink"), registered)
        if not TORCH["hip"]:
            self.assertIn(("CUDA", "p2p"), registered)
            self.assertIn("p2p", pairs["pairs"])
        self.assertFalse(state["initialized"])
        for conn, got in pairs["pairs"].items():
            self.assertTrue(got["device_type_ok"], conn)
            self.assertEqual(got["connection_type"], conn)
            self.assertEqual(got["matrix"], got["dmaconn"], conn)
            if TORCH["cuda"] or TORCH["hip"]:  # a GPU build of PyTorch
                self.assertEqual(len(got["matrix"]), state["device_count"], conn)
                for row in got["matrix"]:
                    self.assertEqual(len(row), state["device_count"], conn)
        return state["device_count"]

    def test_cuda_pairs_hold_pytorchs_assertions(self) -> None:
        count = self.check_cuda_pairs(None)
        for cvd in ["", "0"] + (["1,0"] if count >= 2 else []):
            with self.subTest(CUDA_VISIBLE_DEVICES=cvd):
                self.check_cuda_pairs(cvd)

    def test_hip_from_the_mi300x_example(self) -> None:
        steps = [
            ["import"],
            ["c10d", "HIP", "infinity_fabric"],
            ["c10d", "HIP", "p2p"],
            ["dmaconn", "rocm", "infinity_fabric"],
            ["dmaconn", "rocm", "p2p"],
            ["cuda_state"],
        ]
        _, links, p2p, dc_links, dc_p2p, state = self.run_steps(steps, MI300X)
        self.assertEqual(links["matrix"], MI300X_LINKS)
        self.assertEqual(links["matrix"], dc_links["matrix"])
        self.assertEqual(p2p["matrix"], dc_p2p["matrix"])
        self.assertEqual(len(p2p["matrix"]), 8)
        for entry, conn in ((links, "infinity_fabric"), (p2p, "p2p")):
            self.assertTrue(entry["device_type_ok"])
            self.assertEqual(entry["connection_type"], conn)
        self.assertFalse(state["initialized"])

    def test_xpu_from_a_recorded_topology(self) -> None:
        steps = [
            ["import"],
            ["c10d", "XPU", "xelink"],
            ["c10d", "XPU", "p2p"],
            ["dmaconn", "xpu", "xelink"],
            ["dmaconn", "xpu", "p2p"],
            ["cuda_state"],
        ]
        _, xelink, p2p, dc_xelink, dc_p2p, state = self.run_steps(steps, AURORA)
        self.assertEqual(xelink["matrix"], AURORA_XELINK)
        self.assertEqual(xelink["matrix"], dc_xelink["matrix"])
        self.assertEqual(p2p["matrix"], dc_p2p["matrix"])
        self.assertTrue(xelink["device_type_ok"] and p2p["device_type_ok"])
        self.assertFalse(state["initialized"])

    def test_pytorchs_nvlink_is_left_alone(self) -> None:
        # Under a replay of 2x H200, dmaconn's cuda/nvlink answers [[0, 18], [18, 0]];
        # PyTorch's own detector keeps answering from the machine.
        without = self.run_steps([["c10d", "CUDA", "nvlink"]], H200X2)[0]
        imported, with_it, ours = self.run_steps(
            [["import"], ["c10d", "CUDA", "nvlink"], ["dmaconn", "cuda", "nvlink"]], H200X2
        )
        self.assertNotIn(["CUDA", "nvlink"], imported["registered"])
        self.assertEqual(with_it, without)
        self.assertEqual(ours["matrix"], [[0, 18], [18, 0]])

    def test_a_left_out_pair_keeps_another_plugin(self) -> None:
        # By the variable, with the other plug-in loaded first.
        _, _, kept, ours = self.run_steps(
            [["load", self.plugin], ["import"], ["c10d", "HIP", "p2p"], ["c10d", "HIP", "infinity_fabric"]],
            MI300X,
            DMACONN_TORCH_EXCLUDE="hip/p2p",
        )
        self.assertEqual(kept["matrix"], PLUGIN_MATRIX)
        self.assertEqual(ours["matrix"], MI300X_LINKS)
        # By the argument of register().
        _, imported, registered, kept = self.run_steps(
            [["load", self.plugin], ["import"], ["register", [["HIP", "p2p"]]], ["c10d", "HIP", "p2p"]],
            MI300X,
            DMACONN_TORCH_EXCLUDE="all",
        )
        self.assertEqual(imported["registered"], [])
        self.assertIn(["HIP", "infinity_fabric"], registered["registered"])
        self.assertNotIn(["HIP", "p2p"], registered["registered"])
        self.assertEqual(kept["matrix"], PLUGIN_MATRIX)
        # Left in, c10d's registry replaces the plug-in's detector with dmaconn's.
        _, _, replaced, p2p = self.run_steps(
            [["load", self.plugin], ["import"], ["c10d", "HIP", "p2p"], ["dmaconn", "rocm", "p2p"]], MI300X
        )
        self.assertEqual(replaced["matrix"], p2p["matrix"])
        self.assertEqual(len(replaced["matrix"]), 8)

    @unittest.skipIf(TORCH is not None and TORCH["hip"], "a ROCm PyTorch gets no NVIDIA pairs")
    def test_verified_when_dmaconn_has_it(self) -> None:
        # dmaconn's own cuda/verified, answered from a recording (which holds
        # no verification: zeros, and no GPU work).
        _, registered, got, ours = self.run_steps(
            [["import"], ["register", []], ["c10d", "CUDA", "verified"], ["dmaconn", "cuda", "verified"]],
            H200X2,
            DMACONN_TORCH_EXCLUDE="all",
        )
        self.assertIn(["CUDA", "verified"], registered["registered"])
        self.assertEqual(got["matrix"], ours["matrix"])
        self.assertEqual(got["matrix"], [[0, 0], [0, 0]])
        self.assertTrue(got["device_type_ok"])
        # A failing dmaconn detection is c10d's RuntimeError, with dmaconn's message.
        bad = str(REPO / "tests" / "bad-replays" / "busid.json")
        _, _, failed = self.run_steps(
            [["import"], ["register", []], ["c10d", "CUDA", "verified"]], bad, DMACONN_TORCH_EXCLUDE="all"
        )
        self.assertEqual(failed["error"][0], "RuntimeError")
        self.assertIn("dmaconn: ", failed["error"][1])
        self.assertIn("is not a PCI bus id", failed["error"][1])


if __name__ == "__main__":
    unittest.main()
