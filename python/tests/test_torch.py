# SPDX-License-Identifier: BSD-3-Clause
"""dmaconn.torch without PyTorch: the pairs it registers, exclusion, the
ROCm mapping, the fallback and its single warning, and the shim's build.

Each case that imports dmaconn.torch runs in a child process whose `torch` is
a stand-in module written here (or one whose import fails), so the results
do not depend on whether PyTorch is installed.  test_torch_live.py runs the
real thing where PyTorch is.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import types
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional

import importlib.util

from _support import PYTHON_DIR, child_env, needs_replay, run_python


def _standalone(name: str) -> Any:
    """A module of dmaconn/torch/ loaded on its own: importing the package
    would register in this process (and import PyTorch where installed)."""
    path = PYTHON_DIR / "dmaconn" / "torch" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"dmaconn_torch_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


_pairs = _standalone("_pairs")
_shim = _standalone("_shim")

REPO = Path(__file__).resolve().parents[2]
MI300X = str(REPO / "examples" / "mi300x.json")
AURORA = str(REPO / "tests" / "topologies-xpu" / "aurora-6x2-recorded.json")
MI300X_LINKS = [[0 if i == j else 1 for j in range(8)] for i in range(8)]
# DMACONN_DEVICE_* of include/dmaconn.h
DC_CUDA, DC_ROCM, DC_XPU = 1, 2, 3
# c10::DeviceType values, as the stand-in torch reports them
CUDA, HIP, XPU = 1, 6, 12

BUILTIN = [
    ("cuda", "nvlink"),
    ("cuda", "p2p"),
    ("cuda", "multicast"),
    ("rocm", "infinity_fabric"),
    ("rocm", "p2p"),
    ("xpu", "p2p"),
    ("xpu", "xelink"),
]

# A stand-in for PyTorch: version.hip from MOCK_TORCH_HIP, c10's DeviceType
# values, and c10d's Python entry point unless MOCK_TORCH_NO_REGISTRY is set;
# no headers or libraries, so the real shim cannot be built against it.
MOCK_TORCH = '''
import os, types
if os.environ.get("MOCK_TORCH_ABSENT"):
    raise ImportError("No module named 'torch' (stand-in)")
__version__ = "0.0+stand-in"
version = types.SimpleNamespace(hip=os.environ.get("MOCK_TORCH_HIP") or None, cuda=None)

class _Member:
    def __init__(self, name, value):
        self.name, self.value = name, value
    def __repr__(self):
        return "DeviceType." + self.name

class DeviceType:
    CUDA = _Member("CUDA", 1)
    HIP = _Member("HIP", 6)
    XPU = _Member("XPU", 12)

def _detect_dma_connectivity(device_type, connection_type):
    raise AssertionError("the stand-in registry is never asked")

_C = types.SimpleNamespace(
    _GLIBCXX_USE_CXX11_ABI=True, _autograd=types.SimpleNamespace(DeviceType=DeviceType))
if not os.environ.get("MOCK_TORCH_NO_REGISTRY"):
    _C._distributed_c10d = types.SimpleNamespace(_detect_dma_connectivity=_detect_dma_connectivity)
'''

# Runs in the child: imports dmaconn.torch, then the steps in argv[1];
# prints what happened as JSON.  A "fake_shim" step swaps the shim loader
# for one that records the registrations it is asked for.
CHILD = r'''
import json, os, sys, warnings
steps = json.loads(sys.argv[1])
out = {"calls": [], "steps": []}
caught_all = []

class FakeShim:
    def register(self, torch_type, connection, library, dmaconn_type, dmaconn_connection):
        out["calls"].append([torch_type, connection, library, dmaconn_type, dmaconn_connection])

def fake_load(torch_module):
    out["loads"] = out.get("loads", 0) + 1
    return FakeShim()

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import dmaconn, dmaconn.torch as dt
    import torch
    out["import_registered"] = dt.registered()
    for step in steps:
        entry = {"step": step}
        try:
            if step[0] == "fake_shim":
                dt._shim.load = fake_load
            elif step[0] == "env":
                os.environ[step[1]] = step[2]
            elif step[0] == "register_python_detector":
                dmaconn.register_detector(step[1], step[2], lambda: [[0, 4], [4, 0]])
            elif step[0] == "register":
                exclude = step[1]
                if isinstance(exclude, list):
                    exclude = [tuple([getattr(torch.DeviceType, e[0]), e[1]]) if isinstance(e, list)
                               else e for e in exclude]
                entry["registered"] = dt.register(exclude)
            elif step[0] == "detect":
                device_type = getattr(torch.DeviceType, step[1]) if step[3] else step[1]
                r = dt.detect_dma_connectivity(device_type, step[2])
                entry["same_device_type"] = r.device_type is device_type
                entry["connection_type"] = r.connection_type
                entry["matrix"] = r.matrix
                entry["dmaconn"] = dmaconn.detect(step[4], step[5]).matrix
        except Exception as exc:
            entry["error"] = [type(exc).__name__, str(exc)]
        out["steps"].append(entry)
    out["registered"] = dt.registered()
    out["shim_error"] = dt.shim_error()
out["library"] = dmaconn.library_path()
out["warnings"] = [str(w.message) for w in caught if issubclass(w.category, dmaconn.DmaconnWarning)]
print(json.dumps(out))
'''


def _members() -> Any:
    """Something shaped like DeviceType.HIP."""
    return types.SimpleNamespace(name="HIP", value=6)


class PairsTest(unittest.TestCase):
    """The choice of pairs, as plain data."""

    def test_cuda_build_registers_the_pairs_pytorch_lacks(self) -> None:
        got = [(p.torch_type, p.connection, p.dmaconn_type) for p in _pairs.plan(BUILTIN, rocm=False)]
        self.assertEqual(
            got,
            [
                ("CUDA", "p2p", "cuda"),
                ("CUDA", "multicast", "cuda"),
                ("HIP", "infinity_fabric", "rocm"),
                ("HIP", "p2p", "rocm"),
                ("XPU", "p2p", "xpu"),
                ("XPU", "xelink", "xpu"),
            ],
        )

    def test_never_cuda_nvlink(self) -> None:
        for rocm in (False, True):
            pairs = _pairs.plan(BUILTIN + [("rocm", "nvlink"), ("cuda", "nvlink")], rocm)
            self.assertNotIn(("CUDA", "nvlink"), [(p.torch_type, p.connection) for p in pairs])

    def test_verified_only_when_dmaconn_lists_it(self) -> None:
        without = _pairs.plan(BUILTIN, rocm=False)
        with_it = _pairs.plan(BUILTIN + [("cuda", "verified")], rocm=False)
        self.assertNotIn("verified", [p.connection for p in without])
        self.assertIn(_pairs.Pair("CUDA", "verified", "cuda", "verified"), with_it)

    def test_device_types_come_from_the_connection_table(self) -> None:
        self.assertEqual(_pairs.torch_type("cuda", "p2p"), "CUDA")
        self.assertEqual(_pairs.torch_type("rocm", "infinity_fabric"), "HIP")
        self.assertIsNone(_pairs.torch_type("cuda", "nvlink"))  # PyTorch's own
        self.assertIsNone(_pairs.torch_type("cuda", "bogus"))
        # A type the table gives a row needs nothing here.
        pairs = _pairs.plan([("xpu", "newlink")], rocm=False, device_type=lambda t, c: "XPU")
        self.assertEqual(pairs, [_pairs.Pair("XPU", "newlink", "xpu", "newlink")])

    def test_only_listed_detectors(self) -> None:
        pairs = _pairs.plan([("xpu", "xelink"), ("cuda", "bogus")], rocm=False)
        self.assertEqual(pairs, [_pairs.Pair("XPU", "xelink", "xpu", "xelink")])

    def test_rocm_build_maps_amd_detectors_to_cuda(self) -> None:
        got = [(p.torch_type, p.connection, p.dmaconn_type) for p in _pairs.plan(BUILTIN, rocm=True)]
        self.assertEqual(
            got,
            [
                ("HIP", "infinity_fabric", "rocm"),
                ("CUDA", "infinity_fabric", "rocm"),
                ("HIP", "p2p", "rocm"),
                ("CUDA", "p2p", "rocm"),
                ("XPU", "p2p", "xpu"),
                ("XPU", "xelink", "xpu"),
            ],
        )

    def test_is_rocm_reads_torch_version_hip(self) -> None:
        rocm = types.SimpleNamespace(version=types.SimpleNamespace(hip="6.2.41133", cuda=None))
        cuda = types.SimpleNamespace(version=types.SimpleNamespace(hip=None, cuda="13.0"))
        self.assertTrue(_pairs.is_rocm(rocm))
        self.assertFalse(_pairs.is_rocm(cuda))
        self.assertFalse(_pairs.is_rocm(None))

    def test_exclude_forms(self) -> None:
        self.assertEqual(
            _pairs.parse_exclude(" hip/p2p , XPU/*,"), {("HIP", "p2p"), ("XPU", "*")}
        )
        self.assertEqual(
            _pairs.parse_exclude([(_members(), "infinity_fabric"), ("DeviceType.CUDA", "p2p")]),
            {("HIP", "infinity_fabric"), ("CUDA", "p2p")},
        )
        self.assertEqual(_pairs.parse_exclude("all"), {("*", "*")})
        self.assertEqual(_pairs.parse_exclude(""), set())
        for bad in ("hip", "hip/", "/p2p", ["cuda"], [("cuda", 1)], [42]):
            with self.assertRaises(ValueError, msg=repr(bad)):
                _pairs.parse_exclude(bad)

    def test_select_leaves_out_what_is_excluded(self) -> None:
        pairs = _pairs.plan(BUILTIN, rocm=False)
        kept = _pairs.select(pairs, _pairs.parse_exclude("hip/p2p,xpu/*"))
        self.assertEqual(
            [(p.torch_type, p.connection) for p in kept],
            [("CUDA", "p2p"), ("CUDA", "multicast"), ("HIP", "infinity_fabric")],
        )
        self.assertEqual(_pairs.select(pairs, _pairs.parse_exclude("*")), [])

    def test_lookup(self) -> None:
        pairs = _pairs.plan(BUILTIN, rocm=True)
        self.assertEqual(_pairs.lookup(pairs, "cuda", "p2p"), _pairs.Pair("CUDA", "p2p", "rocm", "p2p"))
        self.assertIsNone(_pairs.lookup(pairs, "cuda", "nvlink"))


class _Child(unittest.TestCase):
    """Runs CHILD with the stand-in torch on the path."""

    tmp: tempfile.TemporaryDirectory

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory(prefix="dmaconn-mock-torch-")
        package = Path(cls.tmp.name) / "torch"
        package.mkdir()
        (package / "__init__.py").write_text(MOCK_TORCH)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def child(
        self, steps: List[Any], replay: Optional[str] = MI300X, **env: Optional[str]
    ) -> Dict[str, Any]:
        base = child_env(replay, **env)
        base["PYTHONPATH"] = os.pathsep.join([self.tmp.name, base["PYTHONPATH"]])
        base.setdefault("DMACONN_TORCH_EXCLUDE", None)
        base = {k: v for k, v in base.items() if v is not None}
        # Never the user's cache: the stand-in must not find a built shim.
        base["DMACONN_TORCH_CACHE"] = str(Path(self.tmp.name) / "cache")
        base["DMACONN_QUIET"] = "1"
        proc = run_python(CHILD, base, json.dumps(steps))
        if proc.returncode != 0:
            raise AssertionError(proc.stderr.decode(errors="replace"))
        return json.loads(proc.stdout)


@needs_replay
class FallbackTest(_Child):
    """No usable shim: one warning, nothing registered, answers from dmaconn."""

    DETECTS = [
        ["detect", "HIP", "infinity_fabric", True, "rocm", "infinity_fabric"],
        ["detect", "hip", "p2p", False, "rocm", "p2p"],
        ["register", None],
        ["register", ["cuda/p2p"]],
        ["detect", "CUDA", "infinity_fabric", True, "rocm", "infinity_fabric"],
    ]

    def check(self, out: Dict[str, Any], reason: str) -> None:
        self.assertEqual(len(out["warnings"]), 1, out["warnings"])
        self.assertIn(reason, out["warnings"][0])
        self.assertIn("detect_dma_connectivity", out["warnings"][0])
        self.assertIn(reason, out["shim_error"])
        self.assertEqual(out["registered"], [])
        steps = out["steps"]
        self.assertEqual(steps[0]["matrix"], MI300X_LINKS)
        self.assertEqual(steps[0]["matrix"], steps[0]["dmaconn"])
        self.assertTrue(steps[0]["same_device_type"])
        self.assertEqual(steps[0]["connection_type"], "infinity_fabric")
        self.assertEqual(steps[1]["matrix"], steps[1]["dmaconn"])
        self.assertEqual(len(steps[1]["matrix"]), 8)
        self.assertTrue(steps[1]["same_device_type"])  # the string given
        self.assertEqual(steps[2]["registered"], [])
        self.assertEqual(steps[3]["registered"], [])

    def test_torch_not_importable(self) -> None:
        out = self.child_without_torch()
        self.assertEqual(len(out["warnings"]), 1, out["warnings"])
        self.assertIn("PyTorch is not importable", out["warnings"][0])
        self.assertEqual(out["registered"], [])
        self.assertEqual(out["matrix"], MI300X_LINKS)
        self.assertEqual(out["again"], [])

    def child_without_torch(self) -> Dict[str, Any]:
        """The stand-in's import fails, as PyTorch's does where it is not installed."""
        code = textwrap.dedent(
            """
            import json, warnings
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                import dmaconn, dmaconn.torch as dt
                again = dt.register()
                r = dt.detect_dma_connectivity("hip", "infinity_fabric")
            print(json.dumps({"warnings": [str(w.message) for w in caught
                                           if issubclass(w.category, dmaconn.DmaconnWarning)],
                              "registered": dt.registered(), "matrix": r.matrix, "again": again}))
            """
        )
        env = child_env(MI300X, DMACONN_QUIET="1", MOCK_TORCH_ABSENT="1")
        env["PYTHONPATH"] = os.pathsep.join([self.tmp.name, env["PYTHONPATH"]])
        proc = run_python(code, env)
        if proc.returncode != 0:
            raise AssertionError(proc.stderr.decode(errors="replace"))
        return json.loads(proc.stdout)

    def test_shim_cannot_be_built(self) -> None:
        self.check(self.child(self.DETECTS), "ships no C++ headers")

    def test_pytorch_without_the_registry(self) -> None:
        self.check(
            self.child(self.DETECTS, MOCK_TORCH_NO_REGISTRY="1"), "has no c10d DMA connectivity registry"
        )

    def test_rocm_pytorch_answers_cuda_from_amd(self) -> None:
        out = self.child(self.DETECTS, MOCK_TORCH_HIP="6.2")
        self.assertEqual(out["steps"][4]["matrix"], MI300X_LINKS)
        self.assertTrue(out["steps"][4]["same_device_type"])
        self.assertEqual(len(out["warnings"]), 1)

    def test_cuda_multicast(self) -> None:
        two = str(REPO / "tests" / "topologies-multicast" / "two-cliques.json")
        out = self.child([["detect", "CUDA", "multicast", True, "cuda", "multicast"]], two)
        step = out["steps"][0]
        self.assertEqual(step["matrix"], step["dmaconn"])
        self.assertEqual(step["matrix"], [[int(i != j and i // 4 == j // 4) for j in range(8)] for i in range(8)])
        self.assertEqual(step["connection_type"], "multicast")

    def test_xpu(self) -> None:
        out = self.child([["detect", "XPU", "xelink", True, "xpu", "xelink"]], AURORA)
        step = out["steps"][0]
        self.assertEqual(len(step["matrix"]), 12)
        self.assertEqual(step["matrix"], step["dmaconn"])
        self.assertEqual(step["matrix"][0][2], 1)  # card 0 tile 0 -> card 1 tile 0


@needs_replay
class RegisterTest(_Child):
    """What reaches the shim, with a recording stand-in for it."""

    def calls(self, out: Dict[str, Any]) -> List[List[Any]]:
        lib = out["library"]
        for call in out["calls"]:
            self.assertEqual(call[2], lib)
        return [[c[0], c[1], c[3], c[4]] for c in out["calls"]]

    def test_cuda_pytorch(self) -> None:
        out = self.child(
            [["fake_shim"], ["register", []], ["register", []]], DMACONN_TORCH_EXCLUDE="all"
        )
        self.assertEqual(out["import_registered"], [])
        self.assertEqual(out["warnings"], [])
        self.assertEqual(
            self.calls(out),
            [
                [CUDA, "p2p", DC_CUDA, "p2p"],
                [CUDA, "multicast", DC_CUDA, "multicast"],
                [CUDA, "verified", DC_CUDA, "verified"],
                [HIP, "infinity_fabric", DC_ROCM, "infinity_fabric"],
                [HIP, "p2p", DC_ROCM, "p2p"],
                [XPU, "p2p", DC_XPU, "p2p"],
                [XPU, "xelink", DC_XPU, "xelink"],
            ],
        )
        self.assertEqual(out["loads"], 1)
        self.assertEqual(out["steps"][2]["registered"], [])  # each pair once
        self.assertEqual(out["registered"], out["steps"][1]["registered"])
        self.assertEqual(
            out["registered"],
            [
                ["CUDA", "p2p"],
                ["CUDA", "multicast"],
                ["CUDA", "verified"],
                ["HIP", "infinity_fabric"],
                ["HIP", "p2p"],
                ["XPU", "p2p"],
                ["XPU", "xelink"],
            ],
        )

    def test_rocm_pytorch(self) -> None:
        out = self.child(
            [["fake_shim"], ["register", []]], DMACONN_TORCH_EXCLUDE="all", MOCK_TORCH_HIP="6.2.41133"
        )
        calls = self.calls(out)
        self.assertEqual(
            calls,
            [
                [HIP, "infinity_fabric", DC_ROCM, "infinity_fabric"],
                [CUDA, "infinity_fabric", DC_ROCM, "infinity_fabric"],
                [HIP, "p2p", DC_ROCM, "p2p"],
                [CUDA, "p2p", DC_ROCM, "p2p"],
                [XPU, "p2p", DC_XPU, "p2p"],
                [XPU, "xelink", DC_XPU, "xelink"],
            ],
        )
        self.assertNotIn(DC_CUDA, [c[2] for c in calls])

    def test_verified_when_listed(self) -> None:
        out = self.child(
            [["register_python_detector", "cuda", "verified"], ["fake_shim"], ["register", ["hip/*", "xpu/*"]]],
            DMACONN_TORCH_EXCLUDE="all",
        )
        self.assertEqual(
            self.calls(out),
            [[CUDA, "p2p", DC_CUDA, "p2p"], [CUDA, "multicast", DC_CUDA, "multicast"],
             [CUDA, "verified", DC_CUDA, "verified"]],
        )

    def test_exclude_argument(self) -> None:
        out = self.child(
            [["fake_shim"], ["register", [["HIP", "p2p"], "xpu/xelink", ["CUDA", "p2p"]]]],
            DMACONN_TORCH_EXCLUDE="all",
        )
        self.assertEqual(
            self.calls(out),
            [
                [CUDA, "multicast", DC_CUDA, "multicast"],
                [CUDA, "verified", DC_CUDA, "verified"],
                [HIP, "infinity_fabric", DC_ROCM, "infinity_fabric"],
                [XPU, "p2p", DC_XPU, "p2p"],
            ],
        )

    def test_exclude_variable(self) -> None:
        # register() without an argument reads the variable when called.
        out = self.child(
            [["fake_shim"], ["env", "DMACONN_TORCH_EXCLUDE", "cuda/*, HIP/infinity_fabric"], ["register", None]],
            DMACONN_TORCH_EXCLUDE="all",
        )
        self.assertEqual(
            self.calls(out),
            [[HIP, "p2p", DC_ROCM, "p2p"], [XPU, "p2p", DC_XPU, "p2p"], [XPU, "xelink", DC_XPU, "xelink"]],
        )

    def test_exclude_all_builds_nothing(self) -> None:
        out = self.child([["register", "all"]], DMACONN_TORCH_EXCLUDE="all")
        self.assertEqual(out["warnings"], [])
        self.assertIsNone(out["shim_error"])  # the shim was not even tried
        self.assertEqual(out["steps"][0]["registered"], [])

    def test_malformed_variable(self) -> None:
        out = self.child([["fake_shim"], ["register", ["bogus"]]], DMACONN_TORCH_EXCLUDE="hip")
        self.assertEqual(len(out["warnings"]), 1)
        self.assertIn("DMACONN_TORCH_EXCLUDE", out["warnings"][0])
        self.assertEqual(out["import_registered"], [])
        self.assertEqual(out["steps"][1]["error"][0], "ValueError")
        self.assertEqual(out["calls"], [])


def _cxx() -> Optional[str]:
    try:
        return _shim.compiler()[0]
    except _shim.ShimUnavailable:
        return None


class ShimBuildTest(unittest.TestCase):
    """The compiler command and the cache, against a stand-in installation."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="dmaconn-shim-")
        self.addCleanup(self.tmp.cleanup)
        root = Path(self.tmp.name) / "site" / "torch"
        (root / "include" / "torch" / "csrc" / "distributed" / "c10d").mkdir(parents=True)
        (root / "lib").mkdir()
        (root / "__init__.py").write_text("")
        self.torch = types.SimpleNamespace(
            __file__=str(root / "__init__.py"),
            __version__="9.9",
            _C=types.SimpleNamespace(_GLIBCXX_USE_CXX11_ABI=False),
        )
        self.root = root

    def fake_libraries(self) -> None:
        """Empty libtorch_cpu.so and libc10.so that link."""
        cxx = _cxx()
        if cxx is None:
            self.skipTest("no C++ compiler here")
        for name in ("libtorch_cpu.so", "libc10.so"):
            src = Path(self.tmp.name) / "empty.cpp"
            src.write_text("int dmaconn_test_empty;\n")
            subprocess.run(
                [cxx, "-shared", "-fPIC", str(src), "-o", str(self.root / "lib" / name)], check=True
            )

    def test_missing_pieces_are_reasons(self) -> None:
        with self.assertRaisesRegex(_shim.ShimUnavailable, "libtorch_cpu.so"):
            _shim.torch_dirs(self.torch)
        (self.root / "lib" / "libtorch_cpu.so").write_text("")
        include, _ = _shim.torch_dirs(self.torch)
        with self.assertRaisesRegex(_shim.ShimUnavailable, "DMA connectivity registry header"):
            _shim.header(include)
        old = include / "torch" / "csrc" / "distributed" / "c10d" / "DMAConnectivity.hpp"
        old.write_text("")
        self.assertEqual(_shim.header(include), old)  # the layout before symm_mem/

    def test_an_installation_without_the_source(self) -> None:
        saved = _shim.SOURCE
        _shim.SOURCE = Path(self.tmp.name) / "absent" / "shim.cpp"
        try:
            with self.assertRaisesRegex(_shim.ShimUnavailable, "shim source is missing"):
                _shim.load(self.torch)
        finally:
            _shim.SOURCE = saved

    def test_command_uses_the_installation_and_its_abi(self) -> None:
        (self.root / "lib" / "libtorch_cpu.so").write_text("")
        argv = _shim.command(self.torch, Path("s.cpp"), Path("o.so"))
        self.assertIn("-D_GLIBCXX_USE_CXX11_ABI=0", argv)
        self.assertIn(str(self.root / "include"), argv)
        self.assertIn(f"-Wl,-rpath,{self.root / 'lib'}", argv)
        self.assertIn("-ltorch_cpu", argv)
        self.assertNotIn("-lcuda", argv)
        self.torch._C._GLIBCXX_USE_CXX11_ABI = True
        self.assertIn("-D_GLIBCXX_USE_CXX11_ABI=1", _shim.command(self.torch, Path("s.cpp"), Path("o.so")))

    def test_compiles_or_says_why(self) -> None:
        self.fake_libraries()
        good = Path(self.tmp.name) / "good.cpp"
        good.write_text('extern "C" __attribute__((visibility("default"))) int dmaconn_test_fn(void) { return 7; }\n')
        out = Path(self.tmp.name) / "out" / "good.so"
        _shim.compile_shared(self.torch, good, out)
        import ctypes

        self.assertEqual(ctypes.CDLL(str(out)).dmaconn_test_fn(), 7)
        bad = Path(self.tmp.name) / "bad.cpp"
        bad.write_text("int broken( {\n")
        with self.assertRaisesRegex(_shim.ShimUnavailable, "does not compile") as ctx:
            _shim.compile_shared(self.torch, bad, Path(self.tmp.name) / "out" / "bad.so")
        self.assertIn("bad.cpp", str(ctx.exception))
        self.assertEqual(sorted(p.name for p in out.parent.iterdir()), ["good.so"])  # no leftovers

    def test_cache_key_and_directory(self) -> None:
        (self.root / "lib" / "libtorch_cpu.so").write_text("")
        (self.root / "include" / _shim.HEADERS[0]).parent.mkdir(parents=True)
        (self.root / "include" / _shim.HEADERS[0]).write_text("")
        if _cxx() is None:
            self.skipTest("no C++ compiler here")
        a = _shim.cache_key(self.torch, b"one")
        self.assertEqual(a, _shim.cache_key(self.torch, b"one"))
        self.assertNotEqual(a, _shim.cache_key(self.torch, b"two"))
        self.torch.__version__ = "9.10"
        self.assertNotEqual(a, _shim.cache_key(self.torch, b"one"))
        cache = Path(self.tmp.name) / "cache"
        old = os.environ.get(_shim.CACHE_ENV)
        os.environ[_shim.CACHE_ENV] = str(cache)
        try:
            self.assertEqual(_shim.cache_dir(), cache)
        finally:
            if old is None:
                del os.environ[_shim.CACHE_ENV]
            else:
                os.environ[_shim.CACHE_ENV] = old
        self.assertEqual(stat.S_IMODE(cache.stat().st_mode), 0o700)



# Loads the shim as dmaconn.torch does, in a process of its own (a library
# once loaded stays loaded): argv is the module, the shim source, the stand-in
# torch's __init__.py, the umask and how many loads.  Prints where each load
# came from, or why none, and the warnings.
_LOAD_SHIM = r"""
import importlib.util, json, os, sys, types, warnings
from pathlib import Path
spec = importlib.util.spec_from_file_location("dmaconn_torch_shim_child", sys.argv[1])
shim = importlib.util.module_from_spec(spec)
spec.loader.exec_module(shim)
shim.SOURCE = Path(sys.argv[2])
torch = types.SimpleNamespace(__file__=sys.argv[3], __version__="9.9",
                              _C=types.SimpleNamespace(_GLIBCXX_USE_CXX11_ABI=True))
os.umask(int(sys.argv[4], 8))
out = {"loads": []}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(int(sys.argv[5])):
        try:
            loaded = shim.load(torch)
            loaded.register(1, "x", "lib", 1, "y")  # it works
            out["loads"].append({"path": str(loaded.path)})
        except shim.ShimUnavailable as exc:
            out["loads"].append({"error": str(exc)})
out["warnings"] = [str(w.message) for w in caught]
print(json.dumps(out))
"""

_GOOD_SHIM = """
extern "C" __attribute__((visibility("default"))) int dmaconn_torch_shim_abi(void) { return 1; }
extern "C" __attribute__((visibility("default"))) int dmaconn_torch_shim_register(
    int, const char *, const char *, int, const char *, char *, unsigned long) { return 0; }
"""

# Another user's library: its constructor leaves a mark where it runs.
_PLANTED_SHIM = _GOOD_SHIM + """
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void planted(void)
{
    const char *mark = getenv("DMACONN_TEST_PLANTED_MARK");
    FILE *f = mark ? fopen(mark, "w") : NULL;
    if (f)
        fclose(f);
}
"""


class ShimCacheTest(unittest.TestCase):
    """The shim cache's rules: what fails them is never loaded nor written
    through; the shim is then built in a private temporary directory."""

    def setUp(self) -> None:
        self.cxx = _cxx()
        if self.cxx is None:
            self.skipTest("no C++ compiler here")
        self.tmp = tempfile.TemporaryDirectory(prefix="dmaconn-shim-cache-")
        self.addCleanup(self.tmp.cleanup)
        self.base = Path(self.tmp.name)
        os.chmod(self.base, 0o700)
        root = self.base / "site" / "torch"
        (root / "include" / _shim.HEADERS[0]).parent.mkdir(parents=True)
        (root / "include" / _shim.HEADERS[0]).write_text("")
        (root / "lib").mkdir()
        (root / "__init__.py").write_text("")
        empty = self.base / "empty.cpp"
        empty.write_text("int dmaconn_test_empty;\n")
        for name in ("libtorch_cpu.so", "libc10.so"):
            subprocess.run(
                [self.cxx, "-shared", "-fPIC", str(empty), "-o", str(root / "lib" / name)], check=True
            )
        self.init = root / "__init__.py"
        self.source = self.base / "shim.cpp"
        self.source.write_text(_GOOD_SHIM)
        torch = types.SimpleNamespace(
            __file__=str(self.init), __version__="9.9", _C=types.SimpleNamespace(_GLIBCXX_USE_CXX11_ABI=True)
        )
        self.key = _shim.cache_key(torch, self.source.read_bytes())
        self.mark = self.base / "planted-ran"

    def so_name(self) -> str:
        return f"torch-shim-{self.key}.so"

    def planted_library(self, path: Path, mode: int) -> None:
        src = self.base / "planted.cpp"
        src.write_text(_PLANTED_SHIM)
        subprocess.run([self.cxx, "-shared", "-fPIC", str(src), "-o", str(path)], check=True)
        os.chmod(path, mode)

    def load(self, cache: Path, loads: int = 1, umask: int = 0o022) -> Dict[str, Any]:
        env = dict(os.environ, DMACONN_TORCH_CACHE=str(cache), DMACONN_TEST_PLANTED_MARK=str(self.mark))
        proc = subprocess.run(
            [sys.executable, "-c", _LOAD_SHIM, str(PYTHON_DIR / "dmaconn" / "torch" / "_shim.py"),
             str(self.source), str(self.init), f"{umask:o}", str(loads)],
            env=env, capture_output=True, text=True, timeout=120,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return json.loads(proc.stdout)

    def assert_refused(self, out: Dict[str, Any], cache: Path, why: str) -> None:
        self.assertFalse(self.mark.exists(), "a planted library was loaded")
        for load in out["loads"]:
            self.assertIn("path", load, out)  # built privately instead
            self.assertFalse(str(load["path"]).startswith(str(cache) + os.sep), out)
        self.assertEqual(len(out["warnings"]), 1, out)  # once per process
        self.assertIn(why, out["warnings"][0])
        self.assertIn("private temporary directory", out["warnings"][0])

    def private_cache(self) -> Path:
        cache = self.base / "cache"
        cache.mkdir(mode=0o700)
        return cache

    def test_builds_once_then_loads_from_the_cache(self) -> None:
        cache = self.base / "new" / "cache"
        first = self.load(cache, umask=0o002)  # the build is private whatever the umask
        self.maxDiff = None
        self.assertEqual(first, {"loads": [{"path": str(cache / self.so_name())}], "warnings": []})
        self.assertEqual(stat.S_IMODE(cache.stat().st_mode), 0o700)
        self.assertFalse(stat.S_IMODE((cache / self.so_name()).stat().st_mode) & 0o022)
        built = (cache / self.so_name()).stat().st_mtime_ns
        self.assertEqual(self.load(cache, loads=2)["loads"], [{"path": str(cache / self.so_name())}] * 2)
        self.assertEqual((cache / self.so_name()).stat().st_mtime_ns, built)  # not built again

    def test_a_sticky_directory_above_is_fine(self) -> None:
        sticky = self.base / "sticky"
        sticky.mkdir()
        os.chmod(sticky, 0o1777)
        out = self.load(sticky / "cache")
        self.assertEqual(out["loads"], [{"path": str(sticky / "cache" / self.so_name())}])
        self.assertEqual(out["warnings"], [])

    def test_cache_writable_by_group(self) -> None:
        cache = self.private_cache()
        os.chmod(cache, 0o770)
        out = self.load(cache, loads=2)
        self.assert_refused(out, cache, f"the shim cache {cache} is writable by group or others")
        self.assertEqual(list(cache.iterdir()), [])  # nothing written there

    def test_directory_above_writable_by_others(self) -> None:
        open_dir = self.base / "open"
        open_dir.mkdir()
        os.chmod(open_dir, 0o777)
        cache = open_dir / "cache"
        cache.mkdir(mode=0o700)
        out = self.load(cache)
        self.assert_refused(
            out, cache, f"{open_dir}, above the shim cache {cache}, is writable by group or others"
        )
        self.assertEqual(list(cache.iterdir()), [])

    def test_link_above_in_a_directory_others_may_write(self) -> None:
        # Our own link to a private directory, but in a directory others may
        # write: they can put a link of theirs in its place at any moment.
        home = self.base / "home"
        home.mkdir(mode=0o700)
        real = home / "cache"
        real.mkdir(mode=0o700)
        open_dir = self.base / "open"
        open_dir.mkdir()
        os.chmod(open_dir, 0o777)
        (open_dir / "link").symlink_to(home)
        cache = open_dir / "link" / "cache"
        out = self.load(cache)
        self.assert_refused(
            out, cache, f"{open_dir}, holding the symbolic link {open_dir / 'link'} above the shim cache"
        )
        self.assertEqual(list(real.iterdir()), [])
        # The same link where only we may write is fine.
        os.chmod(open_dir, 0o755)
        self.assertEqual(self.load(cache)["loads"], [{"path": str(cache / self.so_name())}])

    def test_cache_that_is_a_link(self) -> None:
        real = self.private_cache()
        link = self.base / "link"
        link.symlink_to(real)
        out = self.load(link)
        self.assert_refused(out, link, f"the shim cache {link} is a symbolic link")
        self.assertEqual(list(real.iterdir()), [])

    def test_lock_file_that_is_a_link(self) -> None:
        cache = self.private_cache()
        victim = self.base / "victim"
        victim.write_text("precious\n")
        (cache / f".torch-shim-{self.key}.lock").symlink_to(victim)
        dangling = self.base / "created-through-a-link"
        out = self.load(cache)
        self.assertEqual(victim.read_text(), "precious\n")  # neither truncated nor written
        lock = cache / f".torch-shim-{self.key}.lock"
        self.assert_refused(out, cache, f"the shim lock file {lock} is a symbolic link")
        self.assertFalse((cache / self.so_name()).exists())
        # A dangling link is not followed to create its target either.
        (cache / f".torch-shim-{self.key}.lock").unlink()
        (cache / f".torch-shim-{self.key}.lock").symlink_to(dangling)
        self.assert_refused(self.load(cache), cache, "is a symbolic link")
        self.assertFalse(dangling.exists())

    def test_library_writable_by_group(self) -> None:
        cache = self.private_cache()
        self.planted_library(cache / self.so_name(), 0o775)
        out = self.load(cache, loads=2)
        library = cache / self.so_name()
        self.assert_refused(out, cache, f"the shim library {library} is writable by group or others")

    def test_library_that_is_a_link(self) -> None:
        cache = self.private_cache()
        elsewhere = self.base / "elsewhere.so"
        self.planted_library(elsewhere, 0o700)  # ours and private, but not the cache's
        (cache / self.so_name()).symlink_to(elsewhere)
        out = self.load(cache)
        self.assert_refused(out, cache, f"the shim library {cache / self.so_name()} is a symbolic link")

    def test_library_that_is_not_a_file(self) -> None:
        cache = self.private_cache()
        os.mkfifo(cache / self.so_name(), 0o600)
        out = self.load(cache)
        self.assert_refused(out, cache, "is not a regular file")

    @unittest.skipUnless(os.geteuid() == 0, "needs root to give files to another user")
    def test_another_users_library_and_cache(self) -> None:
        cache = self.private_cache()
        self.planted_library(cache / self.so_name(), 0o755)
        os.chown(cache / self.so_name(), 65534, 65534)
        out = self.load(cache)
        self.assert_refused(out, cache, "belongs to another user (uid 65534)")
        self.mark.unlink(missing_ok=True)
        theirs = self.base / "theirs"
        theirs.mkdir(mode=0o700)
        self.planted_library(theirs / self.so_name(), 0o755)
        os.chown(theirs, 65534, 65534)
        out = self.load(theirs)
        self.assert_refused(out, theirs, f"the shim cache {theirs} belongs to another user (uid 65534)")

if __name__ == "__main__":
    unittest.main()
