#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""dmaconn against PyTorch on a machine with NVIDIA GPUs.

For each CUDA_VISIBLE_DEVICES setting (unset, "1,0", "1", "0"), one fresh
Python process:

1. detects with ``dmaconn.detect_dma_connectivity(DeviceType.CUDA, "nvlink")``;
2. checks that CUDA is still not initialised (``torch.cuda.is_initialized()``)
   and that a fork child can use CUDA (a tensor on the GPU, synchronised);
3. detects with PyTorch's ``_detect_dma_connectivity`` and compares matrices.

Prints PASS/FAIL/SKIP/INFO lines; exits 1 on any FAIL.  Run from a checkout
(DMACONN_LIBRARY or python/../build finds the library):

    DMACONN_LIBRARY=$PWD/build/libdmaconn.so.0 python3 python/tests/device_check.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

PYTHON_DIR = Path(__file__).resolve().parent.parent
SETTINGS: List[Optional[str]] = [None, "1,0", "1", "0"]


def _find(root: Any, dotted: str) -> Any:
    obj = root
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def child() -> int:
    """One setting: prints a JSON report on its last line."""
    report: Dict[str, Any] = {"cvd": os.environ.get("CUDA_VISIBLE_DEVICES"), "checks": [], "info": []}

    def check(name: str, ok: bool, detail: str = "") -> None:
        report["checks"].append({"name": name, "ok": bool(ok), "detail": detail})

    def info(text: str) -> None:
        report["info"].append(text)

    try:
        import torch

        import dmaconn

        info(f"torch {torch.__version__} from {Path(torch.__file__).parent}")
        info(f"dmaconn {dmaconn.version()} from {dmaconn.library_path()}")

        device_type = None
        for where in ("_C._autograd.DeviceType", "_C.DeviceType"):
            try:
                device_type = _find(torch, where).CUDA
                info(f"DeviceType: torch.{where} ({device_type!r})")
                break
            except AttributeError:
                continue
        torch_detect = None
        for where in (
            "_C._distributed_c10d._detect_dma_connectivity",
            "distributed._detect_dma_connectivity",
        ):
            try:
                torch_detect = _find(torch, where)
                info(f"PyTorch detector: torch.{where}")
                break
            except AttributeError:
                continue
        if device_type is None or torch_detect is None:
            check("PyTorch has DeviceType and _detect_dma_connectivity", False)
            print(json.dumps(report))
            return 0

        # 1. dmaconn first, with CUDA untouched.
        ours = dmaconn.detect_dma_connectivity(device_type, "nvlink")
        info(f"dmaconn matrix: {ours.matrix}")
        info(f"dmaconn warnings: {dmaconn.detect('cuda', 'nvlink').warnings}")
        for dev in dmaconn.detect("cuda", "nvlink").devices:
            info(f"device {dev['ordinal']}: {dev.get('name')}, {dev.get('pci_bus_id')}, {dev.get('uuid')}")
        check("result.device_type is the DeviceType passed in", ours.device_type is device_type)
        check("result.connection_type", ours.connection_type == "nvlink", ours.connection_type)
        check(
            "torch.cuda.is_initialized() is False after dmaconn's detection",
            not torch.cuda.is_initialized(),
        )

        # 2. A fork child can still use CUDA.
        pid = os.fork()
        if pid == 0:
            try:
                x = torch.ones(1, device="cuda")
                torch.cuda.synchronize()
                os._exit(0 if float(x.sum()) == 1.0 else 3)
            except BaseException:  # noqa: BLE001
                os._exit(2)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        check("fork child runs CUDA (torch.ones on cuda + synchronize)", code == 0, f"exit code {code}")

        # 3. PyTorch's detection, then the comparison.
        theirs = torch_detect(device_type, "nvlink")
        info(f"PyTorch matrix: {theirs.matrix}")
        check("same matrix as PyTorch", ours.matrix == theirs.matrix, f"{ours.matrix} vs {theirs.matrix}")
        check(
            "same attributes as PyTorch's result",
            all(hasattr(ours, a) for a in ("device_type", "connection_type", "matrix"))
            and theirs.connection_type == ours.connection_type,
        )
        count = torch.cuda.device_count()
        check("as many devices as torch.cuda.device_count()", len(ours.matrix) == count, f"{len(ours.matrix)} vs {count}")

        # Extras, for the record: peer access as CUDA reports it, p2p detector.
        try:
            p2p = dmaconn.detect("cuda", "p2p")
            peer = [[int(i != j and torch.cuda.can_device_access_peer(i, j)) for j in range(count)] for i in range(count)]
            info(f"dmaconn cuda/p2p matrix: {p2p.matrix}; torch.cuda.can_device_access_peer: {peer}")
            for pair in p2p.pairs:
                info(f"p2p {pair}")
        except dmaconn.Error as exc:
            info(f"cuda/p2p: {exc}")
    except Exception as exc:  # noqa: BLE001
        check("child ran", False, f"{type(exc).__name__}: {exc}")
    print(json.dumps(report))
    return 0


def visible_count() -> int:
    """How many GPUs CUDA would show with CUDA_VISIBLE_DEVICES unset (no CUDA)."""
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    code = "import dmaconn; print(len(dmaconn.detect('cuda', 'nvlink').matrix))"
    proc = subprocess.run([sys.executable, "-c", code], env=_env(env), capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        return 0
    return int(proc.stdout.strip().splitlines()[-1])


def _env(base: Dict[str, str]) -> Dict[str, str]:
    env = dict(base)
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def main() -> int:
    n = visible_count()
    print(f"INFO: {n} GPU(s) visible with CUDA_VISIBLE_DEVICES unset")
    failures = 0
    for cvd in SETTINGS:
        label = "CUDA_VISIBLE_DEVICES unset" if cvd is None else f"CUDA_VISIBLE_DEVICES={cvd}"
        env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
        if cvd is not None:
            needed = max(int(x) for x in cvd.split(","))
            if needed >= n:
                print(f"SKIP [{label}]: needs {needed + 1} GPUs")
                continue
            env["CUDA_VISIBLE_DEVICES"] = cvd
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--child"],
            env=_env(env),
            capture_output=True,
            text=True,
            timeout=600,
        )
        try:
            report = json.loads(proc.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            print(f"FAIL [{label}]: the child printed no report (exit {proc.returncode})")
            print(proc.stdout + proc.stderr)
            failures += 1
            continue
        for line in report["info"]:
            print(f"INFO [{label}]: {line}")
        for c in report["checks"]:
            verdict = "PASS" if c["ok"] else "FAIL"
            failures += not c["ok"]
            print(f"{verdict} [{label}]: {c['name']}" + (f" ({c['detail']})" if c["detail"] else ""))
        if proc.stderr.strip():
            print(f"INFO [{label}]: stderr: {proc.stderr.strip()}")
    print(f"{'FAIL' if failures else 'PASS'}: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(child() if sys.argv[1:] == ["--child"] else main())
