# SPDX-License-Identifier: BSD-3-Clause
"""Which c10d (device type, connection type) pairs dmaconn answers, and how.

Pure logic over plain data (no PyTorch), so that the choices can be tested
anywhere: the pairs follow from the detectors dmaconn lists, the device type
the library's connection table gives each (dmaconn_connection_text), whether
PyTorch is a ROCm build, and what the user leaves out.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any, Callable, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

EXCLUDE_ENV = "DMACONN_TORCH_EXCLUDE"

# Never registered: PyTorch's own detector for it must stay.
RESERVED = ("CUDA", "nvlink")


class Pair(NamedTuple):
    """A c10d pair (torch_type is a c10 DeviceType name) and dmaconn's pair answering it."""

    torch_type: str
    connection: str
    dmaconn_type: str
    dmaconn_connection: str


# dmaconn_connection_text_kind's DMACONN_CONNECTION_TORCH (include/dmaconn.h).
_TORCH_TEXT = 6


def torch_type(dmaconn_type: str, connection: str) -> Optional[str]:
    """The c10 DeviceType name ("CUDA", "HIP", "XPU") the library's connection
    table registers a built-in pair under; None for a pair it registers under
    nothing (one PyTorch answers itself) or does not know."""
    # Absolute: this module is also loaded on its own, outside the package.
    from dmaconn import _library

    lib = _library.get()
    value = ctypes.c_int()
    if lib.dmaconn_device_type_parse(os.fsencode(dmaconn_type), ctypes.byref(value)) != 0:
        return None
    text = lib.dmaconn_connection_text(value.value, os.fsencode(connection), _TORCH_TEXT)
    return text.decode() if text else None


def is_rocm(torch_module: Any) -> bool:
    """Whether torch_module is a ROCm build (torch.version.hip set)."""
    version = getattr(torch_module, "version", None)
    return bool(getattr(version, "hip", None))


def plan(
    detectors: Iterable[Tuple[str, str]],
    rocm: bool,
    device_type: Callable[[str, str], Optional[str]] = torch_type,
) -> List[Pair]:
    """Every pair to register, given dmaconn's listed detectors, in their order.

    device_type gives the c10d device type a dmaconn pair is registered
    under (None: none).  On a ROCm build of PyTorch, AMD GPUs are
    DeviceType.CUDA: the AMD detectors are registered under CUDA as well,
    and NVIDIA's under nothing.  A dmaconn pair absent from `detectors` (a
    library built without it, or no "verified" detector) gives nothing.
    """
    pairs: List[Pair] = []
    for dtype, conn in detectors:
        target = device_type(dtype, conn)
        if target is None:
            continue
        if target == "CUDA" and rocm:
            continue  # a ROCm PyTorch has no NVIDIA GPUs
        pairs.append(Pair(target, conn, dtype, conn))
        if dtype == "rocm" and rocm:
            pairs.append(Pair("CUDA", conn, dtype, conn))
    return [p for p in pairs if (p.torch_type, p.connection) != RESERVED]


def _type_name(device_type: Any) -> str:
    """"CUDA" for "cuda", "CUDA", DeviceType.CUDA or "DeviceType.CUDA"."""
    if isinstance(device_type, str):
        name = device_type
    elif isinstance(getattr(device_type, "name", None), str):
        name = device_type.name
    else:
        name = str(device_type)
    return name.rpartition(".")[2].strip().upper()


def parse_exclude(entries: Any) -> Set[Tuple[str, str]]:
    """The pairs to leave out, as {(TYPE, connection)}; ("*", "*") for all.

    `entries` is a string of comma-separated "type/connection" items (the
    form of DMACONN_TORCH_EXCLUDE; "connection" may be "*", and "*" or "all"
    alone leaves out everything), or an iterable of such strings and of
    (device_type, connection) tuples whose device_type is a name or a
    DeviceType.  ValueError for an item of another form.
    """
    if entries is None:
        return set()
    items: Sequence[Any]
    if isinstance(entries, str):
        items = [part for part in entries.split(",") if part.strip()]
    else:
        items = list(entries)
    out: Set[Tuple[str, str]] = set()
    for item in items:
        if isinstance(item, str):
            text = item.strip()
            if text.lower() in ("*", "all"):
                out.add(("*", "*"))
                continue
            dtype, sep, conn = text.partition("/")
            if not sep or not dtype.strip() or not conn.strip():
                raise ValueError(f"{text!r} is not of the form type/connection (e.g. cuda/p2p)")
            out.add((_type_name(dtype), conn.strip()))
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str):
            out.add((_type_name(item[0]), item[1]))
        else:
            raise ValueError(f"{item!r} is neither 'type/connection' nor (device_type, connection)")
    return out


def excluded(pair: Pair, exclude: Set[Tuple[str, str]]) -> bool:
    return bool(
        {("*", "*"), (pair.torch_type, "*"), (pair.torch_type, pair.connection)} & exclude
    )


def select(pairs: Iterable[Pair], exclude: Set[Tuple[str, str]]) -> List[Pair]:
    """pairs less those the user left out."""
    return [p for p in pairs if not excluded(p, exclude)]


def lookup(pairs: Iterable[Pair], device_type: Any, connection: str) -> Optional[Pair]:
    """The pair answering (device_type, connection), or None."""
    name = _type_name(device_type)
    for p in pairs:
        if p.torch_type == name and p.connection == connection:
            return p
    return None
