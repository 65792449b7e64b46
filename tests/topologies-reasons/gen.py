#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the machines of tests/topologies-reasons/: one cause of a zero each.

Two GPUs (0000:03:00.0, 0000:04:00.0) behind one PCIe switch (upstream port
0000:01:00.0, downstream ports 0000:02:08.0 and 0000:02:10.0) under root port
0000:00:01.0, with NVML's answers and the kernel's files ("files": DMI, the
CPU flags, IOMMU group types, PCI config space as {"hex": ...}).
Run it from anywhere; it rewrites the .json files beside it.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
GPUS = ["0000:03:00.0", "0000:04:00.0"]
CHAIN = {
    "0000:00:01.0": "/sys/devices/pci0000:00/0000:00:01.0",
    "0000:01:00.0": "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0",
    "0000:02:08.0": "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0",
    "0000:02:10.0": "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0",
    "0000:03:00.0": "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0",
    "0000:04:00.0": "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0",
}


def config(acs_ctrl=None, size=4096):
    """PCI config space: an AER capability at 0x100, then ACS when asked."""
    cfg = bytearray(size)
    struct.pack_into("<HH", cfg, 0, 0x10DE if size == 64 else 0x1000, 0x1234)
    if size > 0x100:
        nxt = 0x140 if acs_ctrl is not None else 0
        struct.pack_into("<I", cfg, 0x100, 0x0001 | 1 << 16 | nxt << 20)
        if acs_ctrl is not None:
            struct.pack_into("<IHH", cfg, 0x140, 0x000D | 1 << 16, 0x005F, acs_ctrl)
    return {"hex": cfg.hex()}


def tree(acs=None, size=4096):
    """The config space of every function of the path; acs: {bridge: ctrl}."""
    acs = acs or {}
    return {path + "/config": config(acs.get(name), size) for name, path in CHAIN.items()}


def gpu(i, p2p, extra=None, nvlink=None, fabric=None):
    d = {
        "name": "NVIDIA L40S",
        "uuid": "GPU-%08x-0000-4000-8000-00000000000%d" % (0x5EA50000 + i, i),
        "pci": {"bus_id": "0000" + GPUS[i]},
        "cuda_compute_capability": [8, 9],
        "mig_mode": [0, 0],
        "p2p": [dict({"peer": 1 - i}, **p2p)],
    }
    if nvlink is not None:
        d["nvlink"] = nvlink
    if fabric is not None:
        d["fabric"] = fabric
    d.update(extra or {})
    return d


def status(st, ancestor="MULTIPLE"):
    return {"read": st, "write": st, "atomics": st, "nvlink": "NS", "pci": st, "common_ancestor": ancestor}


def load(path):
    with open(path) as f:
        return json.load(f)


def save(name, doc):
    """Writes doc as tests/topologies-reasons/NAME.json."""
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def machine(name, description, p2p, files=None, extra=None, nvml_extra=None):
    doc = {
        "dmaconn_topology": 1,
        "description": description,
        "pci_gpus": GPUS,
        "nvml": dict({"driver_version": "580.159.04", "cuda_driver_version": 13000,
                      "devices": [gpu(0, p2p, extra and extra[0]), gpu(1, p2p, extra and extra[1])]},
                     **(nvml_extra or {})),
    }
    if files:
        doc["files"] = files
    save(name, doc)


REDIRECT = 0x001D  # source validation, request and completion redirect, upstream forwarding
machine("acs", "PCIe ACS request and completion redirection on both downstream ports of the switch; "
        "the driver reports TNS", status("TNS"),
        files=tree({"0000:02:08.0": REDIRECT, "0000:02:10.0": REDIRECT}))
machine("acs-off", "PCIe ACS present on the downstream ports but not redirecting (source validation "
        "only); the driver reports TNS", status("TNS"),
        files=tree({"0000:02:08.0": 0x0001, "0000:02:10.0": 0x0001}))
machine("acs-unreadable", "Config space beyond 64 bytes unreadable (not root): ACS unknown; the driver "
        "reports TNS", status("TNS"), files=tree(size=64))
machine("iommu", "The IOMMU translates DMA (group type DMA-FQ); the driver reports CNS", status("CNS"),
        files=dict(tree(), **{"/sys/bus/pci/devices/0000:03:00.0/iommu_group/type": "DMA-FQ\n",
                              "/sys/bus/pci/devices/0000:04:00.0/iommu_group/type": "DMA-FQ\n"}))
machine("iommu-identity", "IOMMU groups in identity (passthrough) mode; the driver reports CNS",
        status("CNS"),
        files=dict(tree(), **{"/sys/bus/pci/devices/0000:03:00.0/iommu_group/type": "identity\n",
                              "/sys/bus/pci/devices/0000:04:00.0/iommu_group/type": "identity\n"}))
machine("vm-dmi", "A QEMU/KVM guest (DMI), GPUs passed through behind an emulated root complex",
        status("CNS", "HOSTBRIDGE"),
        files={"/sys/class/dmi/id/sys_vendor": "QEMU\n",
               "/sys/class/dmi/id/product_name": "Standard PC (Q35 + ICH9, 2009)\n"})
machine("vm-cpuinfo", "A guest known by the CPU's hypervisor flag only", status("CNS", "HOSTBRIDGE"),
        files={"/proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu vme de pse tsc msr hypervisor lahf_lm\n"})
def big_cpuinfo(size=65536):
    """A many-core guest's /proc/cpuinfo, cut at size bytes (the most a
    file keeps): larger than what a reader takes in one buffer."""
    block = "processor\t: %d\nmodel name\t: AMD EPYC 9654 96-Core Processor\nflags\t\t: fpu vme de pse tsc msr " \
            "hypervisor lahf_lm" + " sse4_2" * 120 + "\n\n"
    text = "".join(block % k for k in range(400))
    return text[:size]


machine("vm-cpuinfo-large", "A many-core guest known by the CPU's hypervisor flag only, its /proc/cpuinfo "
        "larger than one read", status("CNS", "HOSTBRIDGE"), files={"/proc/cpuinfo": big_cpuinfo()})
machine("vm-nvml", "NVML reports GPU passthrough (virtualization mode 1)", status("CNS", "HOSTBRIDGE"),
        extra=[{"virtualization_mode": 1}, {"virtualization_mode": 1}])
machine("bar1", "256 MiB BAR1 (no large BAR); the driver reports NS", status("NS"),
        extra=[{"bar1_total": 268435456}, {"bar1_total": 268435456}])
machine("bar1-large", "48 GiB BAR1; the driver reports NS", status("NS"),
        extra=[{"bar1_total": 51539607552}, {"bar1_total": 51539607552}])
# One GPU's cause only, the pair's second: each pair (0 -> 1 and 1 -> 0) has it.
machine("vm-nvml-one", "NVML reports passthrough for GPU 1 only", status("CNS", "HOSTBRIDGE"),
        extra=[{}, {"virtualization_mode": 1}])
machine("bar1-one", "256 MiB BAR1 on GPU 1 only, 48 GiB on GPU 0; the driver reports NS", status("NS"),
        extra=[{"bar1_total": 51539607552}, {"bar1_total": 268435456}])
machine("iommu-one", "The IOMMU translates DMA of GPU 1 only; the driver reports CNS", status("CNS"),
        files=dict(tree(), **{"/sys/bus/pci/devices/0000:03:00.0/iommu_group/type": "identity\n",
                              "/sys/bus/pci/devices/0000:04:00.0/iommu_group/type": "DMA-FQ\n"}))
machine("cc", "Confidential computing on (nvmlSystemGetConfComputeState: ccFeature 1)", status("NS"),
        nvml_extra={"conf_compute": {"environment": 2, "cc_feature": 1, "devtools_mode": 0}})
machine("cns-bridges", "The driver reports CNS; the kernel shows the path's bridges, without ACS "
        "redirection", status("CNS"), files=tree())

# NVLink: GPU 0 and 1 joined by two active links; GPU 0's links 2 and 3 and
# all of GPU 2's are down.
def nv(peer):
    return {"state": 1, "version": 4, "remote_type": "GPU", "remote_pci": {"bus_id": "0000" + peer}}


down = {"state": 0, "version": 4}
three = ["0000:07:00.0", "0000:0f:00.0", "0000:47:00.0"]
devs = []
links = [[nv(three[1]), nv(three[1]), down, down], [nv(three[0]), nv(three[0])], [down, down]]
for i in range(3):
    devs.append({"name": "NVIDIA A100-SXM4-80GB", "uuid": "GPU-%08x-0000-4000-8000-0000000000a%d" % (0xA1000000 + i, i),
                 "pci": {"bus_id": "0000" + three[i]}, "cuda_compute_capability": [8, 0], "mig_mode": [0, 0],
                 "nvlink": links[i],
                 "p2p": [{"peer": j, "read": "OK" if {i, j} == {0, 1} else "NS",
                          "write": "OK" if {i, j} == {0, 1} else "NS",
                          "atomics": "OK" if {i, j} == {0, 1} else "NS",
                          "nvlink": "OK" if {i, j} == {0, 1} else "NS", "pci": "NS",
                          "common_ancestor": "SYSTEM"} for j in range(3) if j != i]})
save("nvlink-down", {"dmaconn_topology": 1,
                     "description": "GPU 0 and 1 joined by two NVLinks; GPU 0's links 2 and 3 and both of GPU 2's "
                                    "are down",
                     "pci_gpus": three, "nvml": {"devices": devs}})

# NVSwitch with an unhealthy fabric: registered, but the route unhealthy.
sw = {"repeat": 18, "state": 1, "version": 6, "remote_type": "SWITCH", "remote_pci": {"bus_id": "FFFFFFFF:FF:FF.0"}}
two = ["0000:18:00.0", "0000:2a:00.0"]
devs = []
for i in range(2):
    devs.append({"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-%08x-0000-4000-8000-0000000000b%d" % (0xB1000000 + i, i),
                 "pci": {"bus_id": "0000" + two[i]}, "cuda_compute_capability": [9, 0], "mig_mode": [0, 0],
                 "fabric": {"state": 3, "status": "SUCCESS", "cluster_uuid": "5e1f0c3a-0000-4000-8000-000000000001",
                            "clique_id": 1, "health_mask": 0x1 << 4 | 0x1 << 8 | 0x2, "health_summary": 2},
                 "nvlink": [sw],
                 "p2p": [{"peer": 1 - i, "read": "NS", "write": "NS", "atomics": "NS", "nvlink": "NS", "pci": "NS",
                          "common_ancestor": "SYSTEM"}]})
save("fabric-unhealthy", {"dmaconn_topology": 1,
                          "description": "2x H100 on NVSwitches: registered with the fabric, but NVML's health mask "
                                         "says the route is unhealthy; peer access NS",
                          "pci_gpus": two, "nvml": {"devices": devs}})

# The 2x H200 recording with verification sections: a failed and a hung
# pair; one pair passed and the other not verified.
h200 = load(os.path.join(HERE, "..", "..", "examples", "h200x2-recorded.json"))
caps = ["read", "write", "atomics_32", "atomics_64"]


def vpair(frm, to, status, verified, reason_text=None, **extra):
    p = {"from": frm, "to": to, "verified": status}
    for c, ok in zip(caps, verified):
        p[c + "_advertised"] = "yes"
        p[c + "_verified"] = ok
    if reason_text:
        p["reason_text"] = reason_text
    p.update(extra)
    return p


def with_section(name, description, pairs):
    doc = dict(h200)
    doc["description"] = description
    doc["verification"] = {"devices": ["0000:00:06.0", "0000:00:07.0"], "pairs": pairs}
    save(name, doc)


with_section("verified-fail-hang", "2x H200 recorded, with a verification in which GPU 0 -> 1 wrote wrong "
             "data and GPU 1 -> 0 hung",
             [vpair(0, 1, "fail", ["yes", "no", "yes", "yes"],
                    "verification failed: write: 1024 of 1024 values read back wrong"),
              vpair(1, 0, "hang", ["not_run"] * 4,
                    "hung: GPU 1 -> 0 did not finish within 12000 ms; the helper was killed and restarted "
                    "for the other pairs")])
with_section("verified-partial", "2x H200 recorded, with a verification of GPU 0 -> 1 only (passed)",
             [vpair(0, 1, "pass", ["yes"] * 4, gbps="373.23", latency_us="9.66")])

# ACS redirection, and a verification in which both pairs hung: the
# suspected cause is added to the verdict's text.
acs = load(os.path.join(HERE, "acs.json"))
for d in acs["nvml"]["devices"]:
    d["p2p"][0].update({"read": "OK", "write": "OK", "atomics": "OK", "pci": "OK"})
acs["description"] = "PCIe ACS redirection on both downstream ports; the driver reports peer access OK, and the verification hung both ways"
acs["verification"] = {"devices": GPUS, "pairs": [vpair(0, 1, "hang", ["not_run"] * 4, "hung: GPU 0 -> 1 did not finish"),
                                                  vpair(1, 0, "hang", ["not_run"] * 4, "hung: GPU 1 -> 0 did not finish")]}
save("acs-verified-hang", acs)

# NVLinks down on GPUs that keep others: the pairs that lose links carry
# nvlink_down, naming the links a GPU of the same model has active.
TOPO = os.path.join(HERE, "..", "topologies")


def link_states(dev, down, count=18):
    """dev's NVLinks with the links in down inactive (NVML state 0)."""
    first = dict(dev["nvlink"][0])
    first.pop("repeat", None)
    return [dict(first, state=0 if k in down else 1) for k in range(count)]


def links_down(source, name, downs, description):
    """tests/topologies/SOURCE with the NVLinks of downs ({GPU: links}) down."""
    doc = load(os.path.join(TOPO, source))
    for gpu_index, down in downs.items():
        dev = doc["nvml"]["devices"][gpu_index]
        dev["nvlink"] = link_states(dev, down)
    doc["description"] = description
    save(name, doc)


links_down("hgx-h100-8.json", "nvlink-down-two-gpus", {1: {2}, 5: {7, 8}},
           "HGX H100 8-GPU (tests/topologies/hgx-h100-8.json) with NVLink 2 of GPU 1 and NVLinks 7 and 8 "
           "of GPU 5 down (state 0): GPU 1 has 17 active switch links, GPU 5 16, the others 18; the pairs "
           "of GPU 1 read 17 (16 with GPU 5), those of GPU 5 16, every other pair 18")

# 4x H100 NVL on bare metal, NVLink bridges joining GPUs 0-1 and 2-3 with 12
# links each; links 12-17 are spare (inactive on every GPU), and link 4 of
# the bridge 2-3 is down at both of its GPUs.
nvl = load(os.path.join(TOPO, "p2p-vm-hidden.json"))
for i, dev in enumerate(nvl["nvml"]["devices"]):
    peer_bus = dev["nvlink"][0]["remote_pci"]["bus_id"]
    up = {"state": 1, "version": 6, "remote_type": "GPU", "remote_pci": {"bus_id": peer_bus}}
    links = [dict(up) for _ in range(12)] + [{"state": 0, "version": 6} for _ in range(6)]
    if i in (2, 3):
        links[4] = {"state": 0, "version": 6}
    dev["nvlink"] = links
    for p in dev["p2p"]:
        bridged = p["peer"] == i ^ 1
        p.update({"read": "OK" if bridged else "CNS", "write": "OK" if bridged else "CNS",
                  "atomics": "OK" if bridged else "CNS", "nvlink": "OK" if bridged else "NS", "pci": "CNS",
                  "common_ancestor": "SYSTEM"})
nvl["description"] = ("4x NVIDIA H100 NVL on bare metal, NVLink bridges joining GPUs 0-1 and 2-3 (12 links each; "
                      "links 12-17 inactive on every GPU: spare ports); link 4 of the bridge 2-3 is down (state 0 "
                      "at both GPUs), so cuda/nvlink reads 12 for 0-1 and 11 for 2-3. Peer access over the bridges "
                      "only (read, write, atomics, nvlink OK; CNS otherwise)")
save("nvlink-down-bridged", nvl)

# Two GPUs on NVSwitches, each with other links down: no GPU has all of
# them, so the links down are those the other has active.
links_down("h200x2.json", "nvlink-down-h200x2", {0: {3}, 1: {9, 10}},
           "2x NVIDIA H200 on NVSwitches (tests/topologies/h200x2.json) with NVLink 3 of GPU 0 and "
           "NVLinks 9 and 10 of GPU 1 down (state 0): 17 and 16 active switch links, so the pair reads 16")
