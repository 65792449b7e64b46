# SPDX-License-Identifier: BSD-3-Clause
"""dmaconn's detectors inside PyTorch's c10d DMA-connectivity registry.

>>> import torch
>>> import dmaconn.torch          # registers the pairs PyTorch lacks
>>> from torch._C._autograd import DeviceType
>>> from torch._C._distributed_c10d import _detect_dma_connectivity
>>> _detect_dma_connectivity(DeviceType.CUDA, "p2p").matrix

Importing this module registers, through a small C++ shim built once against
the installed PyTorch (shim.cpp), a c10d detector answered by libdmaconn for
each of (HIP, "infinity_fabric"), (HIP, "p2p"), (XPU, "xelink"),
(XPU, "p2p"), (CUDA, "p2p"), (CUDA, "multicast") (can the GPUs share an
NVLink SHARP multicast object, as symmetric memory needs) and
(CUDA, "verified") where dmaconn has such a detector; on a ROCm build of PyTorch (torch.version.hip set) the AMD
detectors are also registered as (CUDA, "infinity_fabric") and
(CUDA, "p2p"), and NVIDIA's are not.  PyTorch's own (CUDA, "nvlink") is never
replaced.  CUDA is never initialised.

c10d replaces a registered pair silently and has no query, so a pair another
plug-in provides must be left out before it is replaced: list it in
DMACONN_TORCH_EXCLUDE ("hip/p2p,xpu/*"; "all" registers nothing at import)
or, with DMACONN_TORCH_EXCLUDE=all, call register(exclude=[...]) yourself.
c10d also keeps the first answer per pair for the life of the process, so
register before anything asks.

Where the shim cannot be built or loaded (no PyTorch, no compiler, a PyTorch
without the registry), a DmaconnWarning says so once, nothing is registered,
and detect_dma_connectivity() here gives the same answers without PyTorch's
registry.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import threading
from typing import Any, Callable, List, Optional, Set, Tuple

from .. import _core, _library
from . import _pairs, _shim
from ._pairs import EXCLUDE_ENV, Pair

__all__ = [
    "EXCLUDE_ENV",
    "detect_dma_connectivity",
    "register",
    "registered",
    "shim_error",
]

_lock = threading.RLock()
_registered: List[Pair] = []
_shim_error: Optional[str] = None  # why the shim is unavailable, once known
_shim_obj: Any = None


def _warn_once(reason: str) -> None:
    _shim.warn_once(
        "nothing registered",
        f"dmaconn.torch: nothing registered in PyTorch's DMA connectivity registry: {reason}; "
        "dmaconn.torch.detect_dma_connectivity() answers without it",
        stacklevel=4,
    )


def _import_torch() -> Any:
    import torch  # the real PyTorch: absolute import

    return torch


def _torch_or_none() -> Any:
    try:
        return _import_torch()
    except (ImportError, OSError):  # not installed, or its libraries do not load
        return None


def _dmaconn_type(name: str) -> int:
    lib = _library.get()
    out = ctypes.c_int()
    _core._check(lib, lib.dmaconn_device_type_parse(os.fsencode(name), ctypes.byref(out)))
    return out.value


def _torch_type_value(torch_module: Any, name: str) -> Optional[int]:
    """The c10 DeviceType value of name ("CUDA", "HIP", "XPU"), or None."""
    try:
        enum = torch_module._C._autograd.DeviceType
    except AttributeError:
        return None
    member = getattr(enum, name, None)
    if member is None:
        return None
    value = getattr(member, "value", member)
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _has_registry(torch_module: Any) -> bool:
    c10d = getattr(getattr(torch_module, "_C", None), "_distributed_c10d", None)
    return hasattr(c10d, "_detect_dma_connectivity")


def _register(
    exclude: Set[Tuple[str, str]],
    torch_module: Any,
    load_shim: Callable[[Any], Any],
) -> List[Pair]:
    """register() with its collaborators given (for tests: a stand-in torch and shim)."""
    global _shim_error, _shim_obj
    with _lock:
        if ("*", "*") in exclude:
            return []  # nothing wanted: do not even build the shim
        if _shim_obj is None:
            if _shim_error is None:
                if torch_module is None:
                    _shim_error = "PyTorch is not importable"
                elif not _has_registry(torch_module):
                    _shim_error = (
                        f"PyTorch {getattr(torch_module, '__version__', '?')} has no c10d DMA "
                        "connectivity registry (torch._C._distributed_c10d._detect_dma_connectivity)"
                    )
                else:
                    try:
                        _shim_obj = load_shim(torch_module)
                    except _shim.ShimUnavailable as exc:
                        _shim_error = str(exc)
            if _shim_obj is None:
                _warn_once(str(_shim_error))
                return []
        library = _core.library_path()
        plan = _pairs.plan(_core.list_detectors(), _pairs.is_rocm(torch_module))
        chosen = _pairs.select(plan, exclude)
        done: List[Pair] = []
        for pair in chosen:
            if pair in _registered:
                continue
            value = _torch_type_value(torch_module, pair.torch_type)
            if value is None:
                continue  # a PyTorch without that device type
            _shim_obj.register(
                value, pair.connection, library, _dmaconn_type(pair.dmaconn_type), pair.dmaconn_connection
            )
            _registered.append(pair)
            done.append(pair)
        return done


def register(exclude: Any = None) -> List[Tuple[str, str]]:
    """Registers dmaconn's detectors in c10d for the pairs PyTorch lacks.

    ``exclude`` lists pairs to leave out (those another plug-in provides):
    "type/connection" strings such as "hip/p2p" or "xpu/*", or
    (DeviceType.HIP, "p2p") tuples; None means DMACONN_TORCH_EXCLUDE.  Pairs
    already registered here are not registered again.  Returns the
    (device type name, connection) pairs this call registered; [] when the
    shim is unavailable (a warning says why, once per process).  ValueError
    for a malformed exclude.
    """
    spec = os.environ.get(EXCLUDE_ENV, "") if exclude is None else exclude
    chosen = _pairs.parse_exclude(spec)
    return [(p.torch_type, p.connection) for p in _register(chosen, _torch_or_none(), _shim.load)]


def registered() -> List[Tuple[str, str]]:
    """The (device type name, connection) pairs registered in c10d by dmaconn so far."""
    with _lock:
        return [(p.torch_type, p.connection) for p in _registered]


def shim_error() -> Optional[str]:
    """Why nothing could be registered, or None (the shim is loaded or not tried yet)."""
    return _shim_error


def detect_dma_connectivity(device_type: Any, connection_type: str) -> _core.DMAConnectivity:
    """What c10d's detector registered here answers, without PyTorch's registry.

    ``device_type`` is a DeviceType (or a name such as "hip"), returned as
    given in the result, with ``connection_type`` and ``matrix`` (and
    dmaconn's ``devices``, ``pairs`` and ``warnings``).  Pairs map as
    register() maps them (HIP is dmaconn's "rocm"; on a ROCm PyTorch, CUDA
    is too); others go to dmaconn's pair of the same names, e.g.
    (CUDA, "nvlink").  NoDetectorError (a RuntimeError) for an unknown pair.
    """
    torch_module = _torch_or_none()
    rocm = _pairs.is_rocm(torch_module)
    pair = _pairs.lookup(_pairs.plan(_core.list_detectors(), rocm), device_type, connection_type)
    if pair is not None:
        target: Any = pair.dmaconn_type
        connection = pair.dmaconn_connection
    elif rocm and _pairs._type_name(device_type) == "CUDA":
        target, connection = "rocm", connection_type
    else:
        target, connection = device_type, connection_type
    result = _core._detect(target, connection, False, stacklevel=2)
    return dataclasses.replace(result, device_type=device_type, connection_type=connection_type)


def _register_at_import() -> None:
    try:
        spec = _pairs.parse_exclude(os.environ.get(EXCLUDE_ENV, ""))
    except ValueError as exc:
        _warn_once(f"{EXCLUDE_ENV}: {exc}")
        return
    try:
        _register(spec, _torch_or_none(), _shim.load)
    except Exception as exc:  # noqa: BLE001 - importing must not fail over this
        _warn_once(f"{type(exc).__name__}: {exc}")


_register_at_import()
