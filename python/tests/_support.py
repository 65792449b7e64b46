# SPDX-License-Identifier: BSD-3-Clause
"""Shared helpers for the dmaconn Python tests.

The library is the one DMACONN_LIBRARY names (else the usual search); the C
tool for comparisons is DMACONN_BUILD_DIR/dmaconn (else beside the library).
Detections that need their own topology or environment run in a subprocess,
since the library keeps NVML's load state for the life of a process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unittest
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

TESTS = Path(__file__).resolve().parent
PYTHON_DIR = TESTS.parent
DATA = TESTS / "data"

if str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))

# Variables that change what the built-in detector sees; every test sets its own.
_DEVICE_ENV = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "DMACONN_QUIET", "DMACONN_REPLAY")

# In this process, detections of cuda/nvlink answer from a fixed topology.
for _name in _DEVICE_ENV:
    os.environ.pop(_name, None)
os.environ["DMACONN_REPLAY"] = str(DATA / "switch2.json")

import dmaconn  # noqa: E402


def data(name: str) -> str:
    return str(DATA / name)


def library_dir() -> Path:
    return Path(dmaconn.library_path()).parent


def replay_available() -> bool:
    override = os.environ.get("DMACONN_REPLAY_LIBRARY")
    if override:
        return os.path.exists(override)
    return (library_dir() / "libdmaconn_replay.so.0").exists()


def needs_replay(cls: type) -> type:
    """Skips a test class when the replay component was not built."""
    return unittest.skipUnless(replay_available(), "the replay component (Jansson) is not built")(cls)


def c_tool() -> Optional[str]:
    build = os.environ.get("DMACONN_BUILD_DIR")
    candidates = [Path(build) / "dmaconn"] if build else []
    candidates.append(library_dir() / "dmaconn")
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def child_env(replay: Optional[str] = None, **extra: Optional[str]) -> Dict[str, str]:
    """An environment for a child: this package, this library, one topology."""
    env = {k: v for k, v in os.environ.items() if k not in _DEVICE_ENV}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(PYTHON_DIR)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env.setdefault("DMACONN_LIBRARY", dmaconn.library_path())
    env["PYTHONIOENCODING"] = "utf-8"
    if replay is not None:
        env["DMACONN_REPLAY"] = replay
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def run(args: Sequence[str], env: Mapping[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), env=dict(env), capture_output=True, timeout=120)


def run_python(code: str, env: Mapping[str, str], *args: str) -> subprocess.CompletedProcess:
    return run([sys.executable, "-c", code, *args], env)


# Runs detections in a fresh process; prints, per call, the result or the
# error and the DmaconnWarnings that call raised.
_PROBE = r"""
import dataclasses, json, sys, warnings
import dmaconn
calls = json.loads(sys.argv[1])
out = []
for call in calls:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        entry = {}
        try:
            if call.get("clear"):
                dmaconn.clear_cache()
            r = dmaconn.detect(call.get("type", "cuda"), call.get("conn", "nvlink"),
                               fresh=call.get("fresh", False))
            entry["result"] = dataclasses.asdict(r)
        except dmaconn.Error as e:
            entry["error"] = {"class": type(e).__name__, "code": e.code, "message": str(e),
                              "runtime": isinstance(e, RuntimeError)}
    entry["warned"] = [str(w.message) for w in caught if issubclass(w.category, dmaconn.DmaconnWarning)]
    entry["other_warnings"] = [str(w.message) for w in caught if not issubclass(w.category, dmaconn.DmaconnWarning)]
    out.append(entry)
print(json.dumps(out))
"""


def probe(
    replay: Optional[str], calls: Optional[List[Dict[str, Any]]] = None, **env: Optional[str]
) -> List[Dict[str, Any]]:
    """Detections in a child process with the given topology and environment."""
    proc = run_python(_PROBE, child_env(replay, **env), json.dumps(calls or [{}]))
    if proc.returncode != 0:
        raise AssertionError(
            f"probe failed ({proc.returncode}):\n{proc.stderr.decode(errors='replace')}"
        )
    return json.loads(proc.stdout)
