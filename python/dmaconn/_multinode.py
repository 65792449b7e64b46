# SPDX-License-Identifier: BSD-3-Clause
"""The global matrix of a job without MPI: the rule libdmaconn_mpi applies.

Each rank makes a record (rank_record()), the job gathers them by any means
(torch.distributed.all_gather_object, a key-value store, files), and every
rank computes global_matrix(records), which is the same everywhere because
it depends on the records alone.  docs/multinode.md states the rule.
"""

from __future__ import annotations

import ctypes
import os
import socket
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

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
    """What this rank contributes to global_matrix(): a plain, picklable dict.

    ``devices``: the local ordinals this rank contributes (default: every
    device it sees), e.g. ``[local_rank]`` when every rank sees all of the
    node's GPUs and uses one.  ``node_view``: also detect over the whole
    node (needed when ranks of one node see different devices, e.g. each has
    its own CUDA_VISIBLE_DEVICES).  ``result``: an existing detection to use.
    A detection error does not raise: the record carries it.
    """
    type_name = _core.device_type_name(device_type)
    record: Record = {"host": host if host is not None else host_id(), "device_type": type_name,
                      "connection_type": connection_type, "matrix": [], "devices": [],
                      "warnings": [], "contribute": [], "view": None, "error": None}
    if connection_type == "multicast":
        reason, text = host_imex()
        record["imex"] = {"reason": reason, "text": text}
    try:
        r = result if result is not None else _core.detect(device_type, connection_type)
    except Error as e:
        record["error"] = str(e)
        return record
    n = len(r.matrix)
    chosen = list(range(n)) if devices is None else [int(i) for i in devices]
    if any(i < 0 or i >= n for i in chosen) or len(set(chosen)) != len(chosen):
        raise ValueError(f"devices {chosen} are not distinct ordinals below {n}")
    record.update(matrix=[list(row) for row in r.matrix],
                  devices=[{k: v for k, v in d.items() if k != "ordinal"} for d in r.devices],
                  warnings=list(r.warnings), contribute=chosen)
    if node_view:
        try:
            v = detect_node(device_type, connection_type)
            record["view"] = {"keys": [_key(d) or "" for d in v.devices], "matrix": v.matrix}
        except Error as e:
            record["view"] = {"error": str(e)}
    return record


def _key(dev: Mapping[str, Any]) -> Optional[str]:
    """The name two ranks match a device by: its UUID, else its PCI address."""
    for k in ("uuid", "pci_bus_id"):
        if dev.get(k):
            return str(dev[k])
    return None


def _view_entry(rec: Mapping[str, Any], ka: str, kb: str) -> Optional[int]:
    view = rec.get("view") or {}
    if view.get("keys"):
        keys, matrix = view["keys"], view["matrix"]
    else:
        keys, matrix = [_key(d) for d in rec["devices"]], rec["matrix"]
    if ka in keys and kb in keys:
        return int(matrix[keys.index(ka)][keys.index(kb)])
    return None


def _domain(dev: Mapping[str, Any]) -> Optional[Tuple[str, str, int]]:
    """(cluster, clique, switch links) of a GPU whose NVSwitch fabric reaches
    other nodes, else None."""
    if dev.get("fabric_state") != "completed" or dev.get("fabric_status") not in ("NVML_SUCCESS", "SUCCESS"):
        return None
    cluster, clique = str(dev.get("cluster_uuid") or ""), dev.get("clique_id")
    try:
        links = int(dev.get("nvlink_switch_links", 0))
    except (TypeError, ValueError):
        return None
    if not cluster.strip("0-") or clique is None or links <= 0:
        return None
    return cluster.lower(), str(clique), links


def _multicast_across(records: Sequence[Mapping[str, Any]], a: Tuple[int, int],
                      b: Tuple[int, int]) -> Tuple[Optional[str], str, Optional[int]]:
    """Multicast between GPUs a and b ((rank, local ordinal)) of different
    nodes, as libdmaconn_mpi judges it: (None, "", None) when they can share
    one multicast object, else (reason, text naming the rank, host and GPU
    that caused it, the rank whose IMEX did or None).  The lower rank first."""
    side = sorted([a, b])
    devs = [records[r]["devices"][i] for r, i in side]
    at = [f"rank {r} ({records[r]['host']}) GPU {i} ({d.get('pci_bus_id') or 'no bus id'})"
          for (r, i), d in zip(side, devs)]
    for k, d in enumerate(devs):
        if str(d.get("multicast_supported")) != "1":
            code = str(d.get("multicast_reason") or "unknown")
            return code, f"{at[k]} cannot join a multicast object ({code})", None
    clusters = [str(d.get("cluster_uuid") or "") for d in devs]
    for k, cluster in enumerate(clusters):
        if not cluster.strip("0-"):
            return "different_cluster", f"{at[k]} is in no multi-node NVLink domain (cluster UUID " \
                                        f"{cluster or 'unknown'})", None
    if clusters[0].replace("-", "").lower() != clusters[1].replace("-", "").lower():
        return "different_cluster", f"{at[0]} is in NVLink domain {clusters[0]}, {at[1]} in {clusters[1]}", None
    cliques = [d.get("multicast_clique_id", d.get("clique_id")) for d in devs]
    if None in cliques or str(cliques[0]) != str(cliques[1]):
        names = ["unknown" if c is None else str(c) for c in cliques]
        return "different_clique", f"{at[0]} is in multicast clique {names[0]}, {at[1]} in {names[1]}", None
    for k, (r, _) in enumerate(side):
        imex = records[r].get("imex") or {"reason": "unknown", "text": "its record says nothing of IMEX"}
        if imex.get("reason"):
            return str(imex["reason"]), f"{at[k]}: its node is not ready for IMEX: {imex.get('text', '')}", r
    return None, "", None


def global_matrix(records: Sequence[Mapping[str, Any]]) -> _core.DMAConnectivity:
    """The matrix over every rank's contributed devices, ranks in order.

    ``records[r]`` is rank r's rank_record().  Device properties: "rank",
    "host", "node", "local_ordinal", then the device's own.  Same rank: its
    matrix entry; same host: the entry of a rank that saw both devices;
    different hosts: connected when both GPUs completed NVSwitch fabric
    registration successfully in the same non-zero cluster UUID and clique,
    with the smaller switch-link count (1 for connections other than
    nvlink); for multicast, when both GPUs can join a multicast object, in
    one cluster UUID and multicast clique, with IMEX ready on both nodes
    (the record's "imex"), every other cross-node pair carrying its reason
    in ``pairs``.  Warnings are every rank's, prefixed "rank R (HOST): ".
    """
    if not records:
        raise ValueError("no records")
    device_type = records[0].get("device_type", "cuda")
    connection = records[0].get("connection_type", "nvlink")
    label = f"{device_type}/{connection}"
    warnings: List[str] = []
    nodes: Dict[str, int] = {}
    owners: List[Tuple[int, int]] = []  # (rank, local ordinal) per global device
    for r, rec in enumerate(records):
        host = str(rec["host"])
        nodes.setdefault(host, len(nodes))
        theirs = (rec.get("device_type", device_type), rec.get("connection_type", connection))
        if theirs != (device_type, connection):
            raise ValueError(f"rank {r} detected {theirs[0]}/{theirs[1]}, not {label}")
        if rec.get("error"):
            warnings.append(f"rank {r} ({host}): {label} detection failed: {rec['error']}; "
                            "it contributes no devices")
            continue
        warnings.extend(f"rank {r} ({host}): {w}" for w in rec.get("warnings", []))
        view = rec.get("view") or {}
        if view.get("error"):
            warnings.append(f"rank {r} ({host}): detecting every device of its node failed: {view['error']}; "
                            "its devices count as unconnected to other ranks' devices on that node")
        owners.extend((r, i) for i in rec.get("contribute", range(len(rec["devices"]))))

    # Only pairs of one rank, one host or one NVLink domain can be non-zero:
    # each group is walked on its own, in global order.
    n = len(owners)
    matrix = [[0] * n for _ in range(n)]
    dup: Dict[int, int] = {}
    unmatched: Dict[int, int] = {}
    by_host: Dict[str, List[int]] = {}
    by_domain: Dict[Tuple[str, str], List[int]] = {}
    domains = [_domain(records[r]["devices"][i]) for r, i in owners]
    for g, (r, i) in enumerate(owners):
        by_host.setdefault(str(records[r]["host"]), []).append(g)
        if domains[g]:
            by_domain.setdefault(domains[g][:2], []).append(g)
    for group in by_host.values():
        for g in group:
            (r, i), ra = owners[g], records[owners[g][0]]
            for h in group:
                (s, j), rb = owners[h], records[owners[h][0]]
                if g == h:
                    continue
                if r == s:
                    matrix[g][h] = int(ra["matrix"][i][j])
                    continue
                ka, kb = _key(ra["devices"][i]), _key(rb["devices"][j])
                if ka and ka == kb:
                    if h > g:
                        dup.setdefault(h, g)
                    continue
                found = None if not ka or not kb else _view_entry(ra, ka, kb)
                if found is None and ka and kb:
                    found = _view_entry(rb, ka, kb)
                if found is None:
                    unmatched.setdefault(max(r, s), min(r, s))
                else:
                    matrix[g][h] = found
    pairs: List[Dict[str, Any]] = []
    no_imex: Dict[str, int] = {}
    if connection == "multicast":
        # One NVLink domain, multicast on both GPUs and IMEX on both nodes;
        # every 0 says why.
        for g in range(n):
            for h in range(n):
                if records[owners[g][0]]["host"] == records[owners[h][0]]["host"]:
                    continue
                code, text, imex_of = _multicast_across(records, owners[g], owners[h])
                if code is None:
                    matrix[g][h] = 1
                    continue
                pairs.append({"from": g, "to": h, "reason": code, "reason_text": text})
                if imex_of is not None:
                    no_imex.setdefault(str(records[imex_of]["host"]), imex_of)
    else:
        for group in by_domain.values():
            for g in group:
                for h in group:
                    if records[owners[g][0]]["host"] != records[owners[h][0]]["host"]:
                        links = min(domains[g][2], domains[h][2])
                        matrix[g][h] = links if connection == "nvlink" else 1
    for host, r in no_imex.items():
        imex = records[r].get("imex") or {}
        warnings.append(f"rank {r} ({host}): not ready for IMEX ({imex.get('reason', 'unknown')}): "
                        f"{imex.get('text', '')}; its GPUs are 0 in {label} to other nodes' GPUs")

    for host in nodes:
        copies = sorted(h for h in dup if records[owners[h][0]]["host"] == host)
        if copies:
            orig = dup[copies[0]]
            (r, i), s = owners[orig], owners[copies[0]][0]
            example = _key(records[r]["devices"][i])
            warnings.append(
                f"{host}: {len(copies)} device{' is' if len(copies) == 1 else 's are'} contributed by "
                f"more than one rank ({example} by ranks {r} and {s}); each copy is a device of its own "
                "here, unconnected to its other copies: give each rank its own GPUs "
                "(CUDA_VISIBLE_DEVICES) or run one rank per node")
    for s in sorted(unmatched):
        r = unmatched[s]
        warnings.append(f"ranks {r} and {s} share node {records[r]['host']} but neither saw both's devices; "
                        "their devices count as unconnected")

    devices = []
    for g, (r, i) in enumerate(owners):
        own = {k: v for k, v in records[r]["devices"][i].items()
               if k not in ("ordinal", "rank", "host", "node", "local_ordinal")}
        host = str(records[r]["host"])
        # Typed as libdmaconn_mpi's result reads in JSON (dmaconn._json).
        devices.append({"ordinal": g, "rank": r, "host": host, "node": nodes[host],
                        "local_ordinal": i, **own})
    return _core.DMAConnectivity(device_type, connection, matrix, devices, pairs, warnings)
