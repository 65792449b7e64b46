# SPDX-License-Identifier: BSD-3-Clause
"""The global matrix of a job without MPI, through libdmaconn_mpi's merge.

Each rank makes a record (rank_record()), the job gathers them by any means
(torch.distributed.all_gather_object, a key-value store, files), and every
rank computes global_matrix(records), which is the same everywhere because
it depends on the records alone.  The merge is the library's
(dmaconn_merge(), src/merge.c); docs/multinode.md states the rule.
"""

from __future__ import annotations

import ctypes
import json
import os
import socket
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from . import _core, _library
from ._errors import Error

Record = Dict[str, Any]


def host_id() -> str:
    """The node's identity as multi-node detection sees it (C: dmaconn_host_id):
    the replay file's "host" when DMACONN_REPLAY is set, else the host name."""
    fn = getattr(_library.get(), "dmaconn_host_id", None)
    if fn is None:  # an older library
        return socket.gethostname()
    fn.restype = ctypes.c_char_p
    fn.argtypes = []
    return os.fsdecode(fn())


def host_imex() -> Tuple[Optional[str], str]:
    """Whether this node is ready for IMEX (C: dmaconn_host_imex): (None, what
    was found) when it is, else (a reason code, what is missing).  An older
    library that cannot tell gives ("unknown", why)."""
    fn = getattr(_library.get(), "dmaconn_host_imex", None)
    if fn is None:
        return "unknown", "this libdmaconn cannot read IMEX readiness (no dmaconn_host_imex)"
    fn.restype = ctypes.c_char_p
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    text = ctypes.create_string_buffer(1024)
    reason = fn(text, len(text))
    return (os.fsdecode(reason) if reason else None), text.value.decode("utf-8", "replace")


def detect_node(device_type: Any, connection_type: str) -> _core.DMAConnectivity:
    """Detects over every device of the node, whatever CUDA_VISIBLE_DEVICES
    says, in PCI bus order (C: dmaconn_detect_node).  Neither cached nor
    announced: the warnings stay in the result."""
    lib = _library.get()
    fn = lib.dmaconn_detect_node
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    out = ctypes.c_void_p()
    _core._check(lib, fn(_core._parse_type(lib, device_type), _core._connection(connection_type),
                         ctypes.byref(out)))
    try:
        return _core._result_from_c(lib, out.value)
    finally:
        lib.dmaconn_result_release(out.value)


def rank_record(
    device_type: Any = "cuda",
    connection_type: str = "nvlink",
    *,
    devices: Optional[Sequence[int]] = None,
    node_view: bool = False,
    host: Optional[str] = None,
    result: Optional[_core.DMAConnectivity] = None,
) -> Record:
    """What this rank contributes to global_matrix(): a plain, picklable dict,
    the library's record (C: dmaconn_rank_record) with this rank's choices.

    ``devices``: the local ordinals this rank contributes (default: every
    device it sees), e.g. ``[local_rank]`` when every rank sees all of the
    node's GPUs and uses one.  ``node_view``: also detect over the whole
    node (needed when ranks of one node see different devices, e.g. each has
    its own CUDA_VISIBLE_DEVICES).  ``result``: an existing detection to use.
    A detection error does not raise: the record carries it.
    """
    type_name = _core.device_type_name(device_type)
    record: Record = {"host": host_id(), "device_type": type_name, "connection_type": connection_type,
                      "matrix": [], "devices": [], "warnings": [], "contribute": [], "view": None, "error": None}
    try:
        # Python's detection first: its warnings and errors as detect()'s;
        # the library's record then reads the cached result.
        r = result if result is not None else _core.detect(device_type, connection_type)
    except Error as e:
        record["error"] = str(e)
    else:
        if result is None:
            record = _library_record(device_type, connection_type, node_view)
        else:  # a result of the caller's: its values as they are
            record.update(matrix=[list(row) for row in r.matrix],
                          devices=[{k: v for k, v in d.items() if k != "ordinal"} for d in r.devices],
                          warnings=list(r.warnings))
            if node_view:
                record["view"] = _library_record(device_type, connection_type, True)["view"]
        n = len(record["matrix"])
        chosen = list(range(n)) if devices is None else [int(i) for i in devices]
        if any(i < 0 or i >= n for i in chosen) or len(set(chosen)) != len(chosen):
            raise ValueError(f"devices {chosen} are not distinct ordinals below {n}")
        record["contribute"] = chosen
    if connection_type == "multicast" and "imex" not in record:  # not the library's record
        reason, text = host_imex()
        record["imex"] = {"reason": reason, "text": text}
    if host is not None:
        record["host"] = host
    return record


def _library_record(device_type: Any, connection_type: str, node_view: bool) -> Record:
    lib = _library.get()
    fn = lib.dmaconn_rank_record
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
    out = ctypes.c_void_p()
    _core._check(lib, fn(_core._parse_type(lib, device_type), _core._connection(connection_type),
                         _NODE_VIEW if node_view else 0, -1, ctypes.byref(out)))
    try:
        record: Record = json.loads(ctypes.string_at(out.value).decode("utf-8"))
    finally:
        lib.dmaconn_record_free.argtypes = [ctypes.c_void_p]
        lib.dmaconn_record_free(out.value)
    record.setdefault("view", None)
    return record


_NODE_VIEW = 1  # DMACONN_RECORD_NODE_VIEW


def global_matrix(records: Sequence[Mapping[str, Any]]) -> _core.DMAConnectivity:
    """The matrix over every rank's contributed devices, ranks in order: the
    library's merge (C: dmaconn_merge, the one libdmaconn_mpi uses), so the
    result is libdmaconn_mpi's for the same records.

    ``records[r]`` is rank r's rank_record() (or a dict of its keys made by
    hand).  Device properties: "rank", "host", "node", "local_ordinal", then
    the device's own (a hand-made record's values as it gives them).
    docs/multinode.md states the rule.
    """
    if not records:
        raise ValueError("no records")
    device_type = records[0].get("device_type", "cuda")
    connection = records[0].get("connection_type", "nvlink")
    for r, rec in enumerate(records):
        theirs = (rec.get("device_type", device_type), rec.get("connection_type", connection))
        if theirs != (device_type, connection):
            raise ValueError(f"rank {r} detected {theirs[0]}/{theirs[1]}, not {device_type}/{connection}")
    lib = _library.get()
    fn = lib.dmaconn_merge
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, ctypes.c_int,
                   ctypes.POINTER(ctypes.c_void_p)]
    texts = (ctypes.c_char_p * len(records))(*[json.dumps(rec).encode("utf-8") for rec in records])
    out = ctypes.c_void_p()
    _core._check(lib, fn(_core._parse_type(lib, device_type), _core._connection(connection), texts,
                         len(records), -1, ctypes.byref(out)))
    try:
        g = _core._result_from_c(lib, out.value)
    finally:
        lib.dmaconn_result_release(out.value)
    for d in g.devices:
        rec = records[d["rank"]]
        if "dmaconn_record" not in rec:  # made by hand: its values as given
            own = rec["devices"][d["local_ordinal"]]
            d.update((k, v) for k, v in own.items() if k not in ("ordinal", "rank", "host", "node", "local_ordinal"))
    return g
