# SPDX-License-Identifier: BSD-3-Clause
"""Where to place work beside each device: its RDMA NICs nearest first with the
GPUDirect RDMA mechanism each can use, and its local CPUs, NUMA nodes and
NVLink-C2C links (the C API's dmaconn_placement_*), as typed values.

>>> p = dmaconn.placement("cuda")
>>> gpu = p.devices[0]
>>> gpu.cpus, gpu.cpu_numa_node, gpu.numactl       # [0, 1, ...], 0, ['--cpunodebind=0', '--membind=0']
>>> link = gpu.closest_nic()                       # the nearest NIC GPUDirect RDMA works with, or None
>>> link.nic.name, link.path, link.gdr             # 'mlx5_0', 'PIX', 'dmabuf'

``as_dict()`` returns the object ``dmaconn --nics --json`` writes as
"placement" (docs/json-output.md).
"""

from __future__ import annotations

import ctypes
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from . import _errors, _library
from ._core import _check, _decode, _lib, _parse_type
from ._errors import DmaconnWarning
from ._json import typed_value

_P, _I, _S = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p

# name: (restype, argtypes), declared on first use.
_PROTOTYPES = {
    "dmaconn_placement_detect": (_I, [_I, ctypes.POINTER(_P)]),
    "dmaconn_placement_free": (None, [_P]),
    "dmaconn_placement_device_type": (_I, [_P]),
    "dmaconn_placement_size": (_I, [_P]),
    "dmaconn_placement_nic_count": (_I, [_P]),
    "dmaconn_placement_property_count": (_I, [_P]),
    "dmaconn_placement_property_key": (_S, [_P, _I]),
    "dmaconn_placement_property_value": (_S, [_P, _I]),
    "dmaconn_placement_device_property_count": (_I, [_P, _I]),
    "dmaconn_placement_device_property_key": (_S, [_P, _I, _I]),
    "dmaconn_placement_device_property_value": (_S, [_P, _I, _I]),
    "dmaconn_placement_nic_property_count": (_I, [_P, _I]),
    "dmaconn_placement_nic_property_key": (_S, [_P, _I, _I]),
    "dmaconn_placement_nic_property_value": (_S, [_P, _I, _I]),
    "dmaconn_placement_device_nic": (_I, [_P, _I, _I]),
    "dmaconn_placement_link_property_count": (_I, [_P, _I, _I]),
    "dmaconn_placement_link_property_key": (_S, [_P, _I, _I, _I]),
    "dmaconn_placement_link_property_value": (_S, [_P, _I, _I, _I]),
    "dmaconn_placement_warning_count": (_I, [_P]),
    "dmaconn_placement_warning": (_S, [_P, _I]),
}
_declared: Dict[int, bool] = {}
_declare_lock = threading.Lock()


def _placement_lib() -> ctypes.CDLL:
    lib = _lib()
    with _declare_lock:
        if not _declared.get(id(lib)):
            for name, (restype, argtypes) in _PROTOTYPES.items():
                try:
                    fn = getattr(lib, name)
                except AttributeError:
                    raise _errors.UnavailableError(
                        f"{_library.path()} has no placement API (it lacks {name})", _errors.EUNAVAILABLE
                    ) from None
                fn.restype, fn.argtypes = restype, argtypes
            _declared[id(lib)] = True
    return lib


def _props(count: int, key: Callable[[int], bytes], value: Callable[[int], bytes]) -> Dict[str, Any]:
    """Typed properties, a repeated key keeping its first value (as --json)."""
    out: Dict[str, Any] = {}
    for k in range(count):
        name = _decode(key(k))
        if name not in out:
            raw = value(k)
            out[name] = typed_value(name, None if raw is None else _decode(raw))
    return out


def _cpulist(text: Optional[str]) -> List[int]:
    """The CPUs of a list such as "0-3,8,10-11" (sysfs's cpulist form)."""
    cpus: List[int] = []
    for part in (text or "").split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        cpus.extend(range(int(low), int(high or low) + 1))
    return cpus


@dataclass(frozen=True)
class Nic:
    """An RDMA-capable NIC of the node (a /sys/class/infiniband device)."""

    index: int
    name: str
    pci_bus_id: Optional[str]
    numa_node: Optional[int]
    pcie_root: Optional[str]
    netdevs: List[str]
    link_layer: Optional[str]
    port_state: Optional[str]
    properties: Dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class NicLink:
    """A device and one of its NICs: the class of their path (PIX, PXB, C2C,
    PHB, NODE, SYS), the GPUDirect RDMA mechanism ("dmabuf", "peermem" with
    its module, or "none" with a reason)."""

    nic: Nic
    path: Optional[str]
    pcie_path: Optional[str]
    gdr: str
    gdr_module: Optional[str]
    reason: Optional[str]
    reason_text: Optional[str]
    properties: Dict[str, Any] = field(repr=False)

    @property
    def usable(self) -> bool:
        """Whether GPUDirect RDMA can be used between the device and the NIC."""
        return self.gdr in ("dmabuf", "peermem")


@dataclass(frozen=True)
class DevicePlacement:
    """Device ``index`` (the runtime's order): its CPUs and NUMA nodes, its
    NVLink-C2C links, its NICs nearest first, and a ready CPU binding."""

    index: int
    pci_bus_id: Optional[str]
    uuid: Optional[str]
    cpuset: Optional[str]
    cpus: List[int]
    cpu_numa_node: Optional[int]
    cpu_source: Optional[str]
    memory_numa_node: Optional[int]
    memory_mode: Optional[str]
    c2c_links: Optional[int]
    c2c_status: Optional[str]
    c2c_max_bw_mbs: Optional[int]
    pcie_root: Optional[str]
    numactl: Optional[List[str]]
    slurm_cpu_bind: Optional[str]
    nics: List[NicLink]
    properties: Dict[str, Any] = field(repr=False)

    def closest_nic(self, usable: bool = True) -> Optional[NicLink]:
        """The nearest NIC (with ``usable``, the nearest GPUDirect RDMA works
        with), or None."""
        return next((link for link in self.nics if link.usable or not usable), None)


@dataclass(frozen=True)
class Placement:
    """The placement of a device type's devices on this node (or a replay)."""

    device_type: str
    devices: List[DevicePlacement]
    nics: List[Nic]
    dmabuf: Optional[str]
    peermem_module: Optional[str]
    gdr_level: Optional[str]
    nics_reason: Optional[str]
    nics_reason_text: Optional[str]
    properties: Dict[str, Any] = field(repr=False)
    warnings: List[str] = field(default_factory=list)

    def as_dict(self) -> Dict[str, Any]:
        """The "placement" object of ``dmaconn --nics --json``."""
        out: Dict[str, Any] = {"device_type": self.device_type}
        for k, v in self.properties.items():
            out.setdefault(k, v)
        devices = []
        for d in self.devices:
            obj: Dict[str, Any] = {"index": d.index}
            for k, v in d.properties.items():
                obj.setdefault(k, v)
            links = []
            for link in d.nics:
                entry: Dict[str, Any] = {"nic": link.nic.index}
                for k, v in link.properties.items():
                    entry.setdefault(k, v)
                links.append(entry)
            obj["nics"] = links
            devices.append(obj)
        nics = []
        for n in self.nics:
            obj = {"index": n.index}
            for k, v in n.properties.items():
                obj.setdefault(k, v)
            nics.append(obj)
        out["devices"] = devices
        out["nics"] = nics
        out["warnings"] = list(self.warnings)
        return out


def _from_c(lib: ctypes.CDLL, p: int) -> Placement:
    nic_count = lib.dmaconn_placement_nic_count(p)
    nics = []
    for n in range(nic_count):
        props = _props(
            lib.dmaconn_placement_nic_property_count(p, n),
            lambda k, n=n: lib.dmaconn_placement_nic_property_key(p, n, k),
            lambda k, n=n: lib.dmaconn_placement_nic_property_value(p, n, k),
        )
        netdev = props.get("netdev")
        nics.append(
            Nic(n, props.get("name") or "", props.get("pci_bus_id"), props.get("numa_node"),
                props.get("pcie_root"), netdev.split(",") if netdev else [], props.get("link_layer"),
                props.get("port_state"), props)
        )
    devices = []
    for i in range(lib.dmaconn_placement_size(p)):
        props = _props(
            lib.dmaconn_placement_device_property_count(p, i),
            lambda k, i=i: lib.dmaconn_placement_device_property_key(p, i, k),
            lambda k, i=i: lib.dmaconn_placement_device_property_value(p, i, k),
        )
        links = []
        for rank in range(nic_count):
            n = lib.dmaconn_placement_device_nic(p, i, rank)
            if n < 0:
                continue
            lp = _props(
                lib.dmaconn_placement_link_property_count(p, i, n),
                lambda k, i=i, n=n: lib.dmaconn_placement_link_property_key(p, i, n, k),
                lambda k, i=i, n=n: lib.dmaconn_placement_link_property_value(p, i, n, k),
            )
            links.append(
                NicLink(nics[n], lp.get("path"), lp.get("pcie_path"), lp.get("gdr") or "unknown",
                        lp.get("gdr_module"), lp.get("reason"), lp.get("reason_text"), lp)
            )
        numactl = props.get("numactl")
        devices.append(
            DevicePlacement(
                i, props.get("pci_bus_id"), props.get("uuid"), props.get("cpuset"),
                _cpulist(props.get("cpuset")), props.get("cpu_numa_node"), props.get("cpu_source"),
                props.get("memory_numa_node"), props.get("memory_mode"), props.get("c2c_links"),
                props.get("c2c_status"), props.get("c2c_max_bw_mbs"), props.get("pcie_root"),
                numactl.split() if numactl else None, props.get("slurm_cpu_bind"), links, props,
            )
        )
    node = _props(
        lib.dmaconn_placement_property_count(p),
        lambda k: lib.dmaconn_placement_property_key(p, k),
        lambda k: lib.dmaconn_placement_property_value(p, k),
    )
    return Placement(
        _decode(lib.dmaconn_device_type_name(lib.dmaconn_placement_device_type(p))), devices, nics,
        node.get("dmabuf"), node.get("peermem_module"), node.get("gdr_level"), node.get("nics_reason"),
        node.get("nics_reason_text"), node,
        [_decode(lib.dmaconn_placement_warning(p, k)) for k in range(lib.dmaconn_placement_warning_count(p))],
    )


def placement(device_type: Any = "cuda") -> Placement:
    """The placement of a device type's devices: NICs, CPUs, NUMA nodes.

    Read from sysfs and NVML (or the replay file), never initialising CUDA.
    Its warnings go to ``warnings.warn`` (category DmaconnWarning).  Raises
    dmaconn.Error (ReplayError, UnavailableError, ...) when it cannot be had.
    """
    lib = _placement_lib()
    ctype = _parse_type(lib, device_type)
    out = ctypes.c_void_p()
    _check(lib, lib.dmaconn_placement_detect(ctype, ctypes.byref(out)))
    try:
        result = _from_c(lib, out.value)
    finally:
        lib.dmaconn_placement_free(out)
    for message in result.warnings:
        warnings.warn(message, DmaconnWarning, stacklevel=2)
    return result


__all__ = ["DevicePlacement", "Nic", "NicLink", "Placement", "placement"]
