#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""dmaconn.torch on a machine with PyTorch and GPUs: prints, for a reader,
what c10d's `_detect_dma_connectivity` answers once dmaconn's detectors are
registered, next to what dmaconn answers, and whether CUDA stayed
uninitialised.  Every check runs in a fresh process (c10d keeps a detector's
first answer).  Exits 1 if any check fails.

usage: DMACONN_LIBRARY=$PWD/build/libdmaconn.so.0 PYTHONPATH=$PWD/python \
           python3 tests/device/torch_check.py
It builds the shim into a fresh cache (timing the first import) and a second
plug-in (python/tests/data/torch_second_plugin.cpp) that registers
(HIP, "p2p") as [[0, 3], [3, 0]].
"""

import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests"))
from harness import Report  # noqa: E402
MI300X = os.path.join(REPO, "examples", "mi300x.json")
H200X2 = os.path.join(REPO, "examples", "h200x2-recorded.json")
AURORA = os.path.join(REPO, "tests", "topologies-xpu", "aurora-6x2-recorded.json")
PLUGIN_SOURCE = os.path.join(REPO, "python", "tests", "data", "torch_second_plugin.cpp")

CHILD = r"""
import ctypes, json, os, sys
pre = json.loads(sys.argv[1])
import torch
from torch._C._autograd import DeviceType
from torch._C._distributed_c10d import _detect_dma_connectivity
for path in pre.get("load", []):
    ctypes.CDLL(path)
if pre.get("import", True):
    import dmaconn.torch
    if pre.get("register") is not None:
        dmaconn.torch.register([(getattr(DeviceType, t), c) for t, c in pre["register"]])
import dmaconn
out = {"registered": dmaconn.torch.registered() if pre.get("import", True) else None, "calls": []}
for t, conn, dc in pre["calls"]:
    entry = {"call": "_detect_dma_connectivity(DeviceType.%s, %r)" % (t, conn)}
    try:
        c = _detect_dma_connectivity(getattr(DeviceType, t), conn)
        entry.update(device_type=str(c.device_type), connection_type=c.connection_type,
                     matrix=[list(r) for r in c.matrix])
    except RuntimeError as e:
        entry["error"] = str(e).splitlines()[0]
    if dc:
        entry["dmaconn_call"] = "dmaconn.detect(%r, %r).matrix" % tuple(dc)
        entry["dmaconn"] = dmaconn.detect(*dc).matrix
    out["calls"].append(entry)
out["cuda_initialized"] = torch.cuda.is_initialized()
out["device_count"] = torch.cuda.device_count()
print(json.dumps(out))
"""


def child(title, pre, env_extra):
    env = {k: v for k, v in os.environ.items() if k not in ("DMACONN_REPLAY", "CUDA_VISIBLE_DEVICES",
                                                             "DMACONN_TORCH_EXCLUDE")}
    env.update({k: v for k, v in env_extra.items() if v is not None})
    shown = " ".join(f"{k}={v!r}" for k, v in env_extra.items() if v is not None)
    print(f"\n== {title}\n   env: {shown or '(none of ours)'}")
    start = time.time()
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(pre)], env=env, capture_output=True,
                          text=True, timeout=600)
    if proc.returncode != 0:
        print(proc.stderr)
        check(False, "child process failed")
        return None
    out = json.loads(proc.stdout)
    print(f"   ({time.time() - start:.1f} s) registered by dmaconn.torch: {out['registered']}")
    for e in out["calls"]:
        if "error" in e:
            print(f"   {e['call']} -> RuntimeError: {e['error']}")
        else:
            print(f"   {e['call']} -> device_type={e['device_type']} connection_type={e['connection_type']!r}"
                  f" matrix={e['matrix']}")
        if "dmaconn" in e:
            print(f"   {e['dmaconn_call']} -> {e['dmaconn']}")
    print(f"   torch.cuda.is_initialized() after: {out['cuda_initialized']}; "
          f"torch.cuda.device_count(): {out['device_count']}")
    check(out["cuda_initialized"] is False, "CUDA not initialised by the detections")
    return out


report = Report()
check = report.check


def main():
    tmp = tempfile.mkdtemp(prefix="dmaconn-torch-check-")
    os.environ.setdefault("DMACONN_TORCH_CACHE", os.path.join(tmp, "cache"))
    os.environ["DMACONN_TORCH_EXCLUDE"] = "all"  # this process registers nothing
    import torch
    from pathlib import Path

    from dmaconn.torch import _shim

    plugin = os.path.join(tmp, "second_plugin.so")
    _shim.compile_shared(torch, Path(PLUGIN_SOURCE), Path(plugin))

    print(f"torch {torch.__version__} (cuda {torch.version.cuda}, hip {torch.version.hip}) from {torch.__file__}")
    # CUDA pairs: dmaconn's matrix, and PyTorch's own test's assertions, per CUDA_VISIBLE_DEVICES.
    for cvd in (None, "0", ""):
        out = child("CUDA pairs", {"calls": [["CUDA", "p2p", ["cuda", "p2p"]], ["CUDA", "nvlink", None]]},
                    {"CUDA_VISIBLE_DEVICES": cvd})
        if out:
            p2p = out["calls"][0]
            n = out["device_count"]
            check(p2p.get("matrix") == p2p["dmaconn"], "(CUDA, 'p2p') == dmaconn.detect('cuda', 'p2p').matrix")
            check(p2p.get("device_type") == "DeviceType.CUDA" and p2p.get("connection_type") == "p2p"
                  and len(p2p["matrix"]) == n and all(len(r) == n for r in p2p["matrix"]),
                  f"PyTorch's assertions: device_type, connection_type, {n}x{n} matrix")
            check(["CUDA", "nvlink"] not in out["registered"], "(CUDA, 'nvlink') not registered by dmaconn")
    for title, torch_type, dmaconn_type, connections, replay in (
            ("HIP from a replay of the MI300X example", "HIP", "rocm", ("infinity_fabric", "p2p"), MI300X),
            ("XPU from a replay of tests/topologies-xpu/aurora-6x2-recorded.json", "XPU", "xpu", ("xelink", "p2p"),
             AURORA)):
        out = child(title, {"calls": [[torch_type, c, [dmaconn_type, c]] for c in connections]},
                    {"DMACONN_REPLAY": replay})
        for e in out["calls"] if out else []:
            check(e.get("matrix") == e["dmaconn"] and e.get("device_type") == "DeviceType." + torch_type,
                  f"{e['call']} == the replayed matrix")
    # PyTorch's own (CUDA, "nvlink"), without and with dmaconn.torch, under a replay of 2x H200
    # (dmaconn's own cuda/nvlink then says [[0, 18], [18, 0]]).
    a = child("PyTorch's (CUDA, 'nvlink') without dmaconn.torch", {"import": False, "calls": [["CUDA", "nvlink", None]]},
              {"DMACONN_REPLAY": H200X2})
    b = child("PyTorch's (CUDA, 'nvlink') with dmaconn.torch",
              {"calls": [["CUDA", "nvlink", ["cuda", "nvlink"]]]}, {"DMACONN_REPLAY": H200X2})
    if a and b:
        same = {k: v for k, v in a["calls"][0].items()} == {k: v for k, v in b["calls"][0].items()
                                                           if not k.startswith("dmaconn")}
        check(same, "(CUDA, 'nvlink') unchanged by dmaconn.torch")
    # A left-out pair keeps the second plug-in's detector.
    for title, pre, env in (
        ("left out by DMACONN_TORCH_EXCLUDE", {"load": [plugin]}, {"DMACONN_TORCH_EXCLUDE": "hip/p2p"}),
        ("left out by register(exclude=...)", {"load": [plugin], "register": [["HIP", "p2p"]]},
         {"DMACONN_TORCH_EXCLUDE": "all"}),
        ("not left out (control): c10d replaces silently", {"load": [plugin]}, {}),
    ):
        pre["calls"] = [["HIP", "p2p", ["rocm", "p2p"]]]
        env["DMACONN_REPLAY"] = MI300X
        out = child(f"second plug-in registered (HIP, 'p2p'); {title}", pre, env)
        if out:
            got = out["calls"][0].get("matrix")
            if "control" in title:
                check(got == out["calls"][0]["dmaconn"], "dmaconn's detector replaced the plug-in's")
            else:
                check(got == [[0, 3], [3, 0]], "the plug-in's detector kept")
    return report.done()


if __name__ == "__main__":
    sys.exit(main())
