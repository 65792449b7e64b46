#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the machines of tests/topologies-placement/: GPUs, RDMA NICs,
NUMA nodes and the kernel's files dmaconn_placement_detect() reads.

Each machine is a replay file: NVML's answers (with the placement fields:
cpu_affinity, memory_affinity, numa_node_id, c2c_link_*) and "files": the
/sys/devices tree of every GPU and NIC with PCI config space ({"hex": ...};
64 bytes where the machine was recorded without root), the devices'
numa_node and local_cpulist, /sys/class/infiniband, the NUMA nodes' cpulist,
the kernel release, /proc/driver/nvidia/version and the peer-memory
modules' files.  Run it from anywhere; it rewrites the .json files beside
it.  The expected answers (NAME.expected) are the library's output, checked
by hand and by tests/placement_test.py's facts.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OPEN_580 = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  "
            "Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Sep 23 09:55:41 UTC 2025")
OPEN_580_ARM = ("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  "
                "Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Sep 23 09:51:11 UTC 2025")
PROPRIETARY_535 = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.247.01  "
                   "Wed Apr 30 21:27:36 UTC 2025")
NS = {"error": "NOT_SUPPORTED"}
# The kernel's CPU modalias (/sys/devices/system/cpu/modalias): x86's vendor
# (X86_VENDOR_INTEL 0, _AMD 2), family and model in hex, then feature bits.
FEATURES = ":feature:,0000,0001,0002,0003,0004,0005,0006,0007,0008,0009,000B,000C,000D,000E,000F,0010,0011\n"
SAPPHIRE_RAPIDS = "cpu:type:x86,ven0000fam0006mod008F" + FEATURES
EMERALD_RAPIDS = "cpu:type:x86,ven0000fam0006mod00CF" + FEATURES
EPYC_GENOA = "cpu:type:x86,ven0002fam0019mod0011" + FEATURES
GRACE = "cpu:type:aarch64:feature:,0000,0001,0002,0003,0004,0005,0006,0007,0008,0009,000A,000B\n"


def config(acs_ctrl=None, size=4096):
    """PCI config space: ACS at 0x100 when asked (a bridge), else no extended capability."""
    cfg = bytearray(size)
    struct.pack_into("<HH", cfg, 0, 0x1000, 0x1234)
    if size > 0x100 and acs_ctrl is not None:
        struct.pack_into("<IHH", cfg, 0x100, 0x000D | 1 << 16, 0x005F, acs_ctrl)
    return {"hex": cfg.hex()}


def cpulist(cpus):
    """[0, 1, 2, 5] -> "0-2,5"."""
    out, cpus = [], sorted(cpus)
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append("%d-%d" % (cpus[i], cpus[j]) if j > i else "%d" % cpus[i])
        i = j + 1
    return ",".join(out)


def parse(lst):
    cpus = []
    for part in lst.split(","):
        if part:
            a, _, b = part.partition("-")
            cpus += range(int(a), int(b or a) + 1)
    return cpus


class Machine:
    def __init__(self, nodes, kernel="6.8.0-45-generic", nvidia=OPEN_580, peermem=(), root=True, cpu=None):
        """nodes: {id: cpulist ("" for a memory-only node)}; cpu: the CPU
        modalias (by default the driver's architecture's: Sapphire Rapids or Grace)."""
        self.nodes = nodes
        self.root = root
        self.files = {}
        self.cpu = cpu or (GRACE if nvidia and "aarch64" in nvidia else SAPPHIRE_RAPIDS)
        self.devices, self.pci_gpus = [], []
        self.files["/proc/sys/kernel/osrelease"] = kernel + "\n"
        if nvidia:
            self.files["/proc/driver/nvidia/version"] = nvidia + "\n"
        for module in peermem:
            self.files[{"nvidia_peermem": "/sys/module/nvidia_peermem/version",
                        "nv_peer_mem": "/sys/kernel/mm/memory_peers/nv_mem/version",
                        "nv_mem_nc": "/sys/kernel/mm/memory_peers/nv_mem_nc/version"}[module]] = "1.3\n"
        for n, cpus in nodes.items():
            self.files["/sys/devices/system/node/node%d/cpulist" % n] = cpus + "\n"
        self.all_cpus = cpulist(sum((parse(c) for c in nodes.values()), []))

    def function(self, root, bridges, bus, numa, acs=None, iommu=None):
        """A PCI function under host bridge root ("pci0000:00") behind bridges
        (root port first); acs: {bridge: ACS control}."""
        acs = acs or {}
        size = 4096 if self.root else 64
        path = "/sys/devices/" + root
        for b in bridges:
            path += "/" + b
            self.files[path + "/config"] = config(acs.get(b, 0), size)
        path += "/" + bus
        self.files[path + "/config"] = config(None, size)
        self.files["/sys/bus/pci/devices/%s/numa_node" % bus] = "%d\n" % numa
        local = self.nodes[numa] if numa >= 0 else self.all_cpus
        self.files["/sys/bus/pci/devices/%s/local_cpulist" % bus] = local + "\n"
        if iommu:
            self.files["/sys/bus/pci/devices/%s/iommu_group/type" % bus] = iommu + "\n"

    # Each product's CUDA compute capability, as NVML answers it.
    CAPABILITY = {"NVIDIA H100 80GB HBM3": [9, 0], "NVIDIA H200": [9, 0], "NVIDIA GH200 480GB": [9, 0],
                  "NVIDIA L40S": [8, 9], "NVIDIA GB200": [10, 0], "NVIDIA GB10": [12, 1]}

    def gpu(self, name, root, bridges, bus, numa, nvml=None, **kw):
        self.function(root, bridges, bus, numa, **kw)
        i = len(self.devices)
        d = {
            "name": name,
            "uuid": "GPU-%08x-0000-4000-8000-%012x" % (0x9ace0000 + i, i),
            "pci": {"bus_id": "0000" + bus},
            "cuda_compute_capability": self.CAPABILITY[name],
            "mig_mode": [0, 0],
        }
        d.update(nvml or {})
        self.devices.append(d)
        self.pci_gpus.append(bus)

    def nic(self, name, root, bridges, bus, numa, netdev=None, link_layer="InfiniBand", state="4: ACTIVE", **kw):
        self.function(root, bridges, bus, numa, **kw)
        base = "/sys/class/infiniband/" + name
        self.files[base + "/device/uevent"] = ("DRIVER=mlx5_core\nPCI_CLASS=20000\nPCI_ID=15B3:1021\n"
                                               "PCI_SLOT_NAME=%s\nMODALIAS=pci:v000015B3d00001021\n" % bus)
        if netdev:
            self.files[base + "/device/net/%s/ifindex" % netdev] = "%d\n" % (len(self.files) % 97 + 2)
        self.files[base + "/ports/1/link_layer"] = link_layer + "\n"
        self.files[base + "/ports/1/rate"] = ("400 Gb/sec (4X NDR)" if link_layer == "InfiniBand"
                                              else "200 Gb/sec (4X HDR)") + "\n"
        self.files[base + "/node_guid"] = "a088:c203:00%02x:%04x\n" % (len(self.pci_gpus), len(self.files) % 65536)
        self.files[base + "/ports/1/state"] = state + "\n"

    def write(self, name, description, nvml=True, level_zero=None):
        self.files["/sys/devices/system/cpu/modalias"] = self.cpu
        doc = {
            "dmaconn_topology": 1,
            "description": description,
            "pci_gpus": self.pci_gpus,
            "nvml": {"driver_version": "580.95.05", "cuda_driver_version": 13000, "devices": self.devices},
            "files": dict(sorted(self.files.items())),
        }
        if not nvml:
            del doc["pci_gpus"], doc["nvml"]
        if level_zero:
            doc["level_zero"] = level_zero
        with open(os.path.join(HERE, name + ".json"), "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")


def affinity(cpus, mems, numa_id=NS, c2c=0, status=None, bw=None):
    d = {"cpu_affinity": cpus, "memory_affinity": mems, "numa_node_id": numa_id}
    if c2c is None:
        d.update({"c2c_link_count": NS})
    else:
        d["c2c_link_count"] = c2c
        if c2c:
            d.update({"c2c_link_status": status, "c2c_link_max_bw": bw})
    return d


SPR = {0: "0-55,112-167", 1: "56-111,168-223"}


def dgx_h100(nics=True, storage=True):
    """DGX H100: per GPU a PCIe switch shared with its ConnectX-7 (PIX), four
    pairs per socket, two storage NICs on host bridges of their own."""
    m = Machine(SPR, peermem=("nvidia_peermem",))
    gpus = ["1b", "43", "52", "61", "9d", "c3", "d1", "df"]
    for k, g in enumerate(gpus):
        numa = k // 4
        top = int(g, 16) - 4
        root = "pci0000:%02x" % top
        rp = "0000:%02x:01.0" % top
        up = "0000:%02x:00.0" % (top + 1)
        down_gpu, down_nic = "0000:%02x:00.0" % (top + 2), "0000:%02x:01.0" % (top + 2)
        m.gpu("NVIDIA H100 80GB HBM3", root, [rp, up, down_gpu], "0000:%s:00.0" % g, numa,
              affinity(SPR[numa], str(numa)))
        if nics:
            m.nic("mlx5_%d" % k, root, [rp, up, down_nic], "0000:%02x:00.0" % (top + 3), numa,
                  netdev="ibp%ds0" % (top + 3))
    if storage:
        m.nic("mlx5_8", "pci0000:2a", ["0000:2a:01.0"], "0000:2b:00.0", 0, netdev="enp43s0np0",
              link_layer="Ethernet")
        m.nic("mlx5_9", "pci0000:aa", ["0000:aa:01.0"], "0000:ab:00.0", 1, netdev="enp171s0np0",
              link_layer="Ethernet")
    return m


def pair_machine(nvidia=OPEN_580, peermem=(), kernel="6.8.0-45-generic", root=True, acs=None, iommu=None):
    """Two GPUs, each beside a NIC behind one PCIe switch of socket 0 or 1."""
    m = Machine(SPR, kernel=kernel, nvidia=nvidia, peermem=peermem, root=root)
    for k in range(2):
        top = 0x10 + 0x40 * k
        root_name = "pci0000:%02x" % top
        rp, up = "0000:%02x:01.0" % top, "0000:%02x:00.0" % (top + 1)
        dg, dn = "0000:%02x:00.0" % (top + 2), "0000:%02x:01.0" % (top + 2)
        m.gpu("NVIDIA L40S", root_name, [rp, up, dg], "0000:%02x:00.0" % (top + 3), k,
              affinity(SPR[k], str(k)), acs=acs, iommu=iommu)
        m.nic("mlx5_%d" % k, root_name, [rp, up, dn], "0000:%02x:00.0" % (top + 4), k,
              netdev="ens%dnp0" % (top + 4), link_layer="Ethernet", acs=acs)
    return m


def main():
    dgx_h100().write("dgx-h100", "DGX H100: 8 GPUs, each behind a PCIe switch shared with its ConnectX-7 (PIX), "
                     "2 storage NICs; open NVIDIA module 580, kernel 6.8, nvidia_peermem loaded; recorded as root")
    dgx_h100(storage=False).write("dgx-h100-8nic", "DGX H100 with its 8 compute NICs only (the bench's machine)")

    # GB200 tray, NUMA mode: two Grace CPUs (nodes 0, 1), four B200 whose
    # HBM is a CPU-less node each (2-5), four ConnectX-7 on the Graces' own
    # host bridges (PCIe class NODE: C2C as NCCL counts it), a BlueField-3
    # front end on Grace 0.
    grace = {0: "0-71", 1: "72-143", 2: "", 3: "", 4: "", 5: ""}
    m = Machine(grace, kernel="6.8.0-1017-nvidia-64k", nvidia=OPEN_580_ARM)
    for k in range(4):
        socket = k // 2
        dom = 8 * socket + k % 2
        m.gpu("NVIDIA GB200", "pci%04x:00" % dom, ["%04x:00:00.0" % dom], "%04x:01:00.0" % dom, socket,
              affinity(grace[socket], str(socket), numa_id=2 + k, c2c=10, status=1, bw=45000))
        ndom = dom + 2
        m.nic("mlx5_%d" % k, "pci%04x:00" % ndom, ["%04x:00:00.0" % ndom], "%04x:01:00.0" % ndom, socket,
              netdev="ibP%dp1s0" % ndom)
    m.nic("mlx5_4", "pci0006:00", ["0006:00:00.0"], "0006:01:00.0", 0, netdev="enP6p1s0f0np0", link_layer="Ethernet")
    m.write("gb200-tray", "GB200 tray in NUMA mode: 2 Grace, 4 B200 (HBM nodes 2-5, CPU-less), 4 ConnectX-7 on the "
            "Graces' host bridges, a BlueField-3 front end; C2C 10 links active")

    # TransferBench#352: 4 GPUs, each in a PCIe domain of its own with its two
    # back-end NICs behind one switch; the front-end NIC on domain 0's root.
    m = Machine(SPR)
    for k in range(4):
        root = "pci%04x:00" % k
        rp, up = "%04x:00:01.0" % k, "%04x:01:00.0" % k
        m.gpu("NVIDIA H100 80GB HBM3", root, [rp, up, "%04x:02:00.0" % k], "%04x:03:00.0" % k, k // 2,
              affinity(SPR[k // 2], str(k // 2)))
        for j in range(2):
            m.nic("mlx5_%d" % (2 * k + j), root, [rp, up, "%04x:02:%02x.0" % (k, j + 1)], "%04x:%02x:00.0" % (k, 4 + j),
                  k // 2, netdev="ibp%ds%d" % (k, j))
    m.nic("mlx5_8", "pci0000:00", ["0000:00:02.0"], "0000:80:00.0", 0, netdev="eno1np0", link_layer="Ethernet")
    m.write("transferbench-352", "TransferBench#352's board: 4 GPUs, one PCIe domain each with two back-end NICs "
            "behind its switch; a front-end NIC on domain 0's root complex")

    pair_machine(nvidia=PROPRIETARY_535, peermem=("nvidia_peermem",)).write(
        "peermem-only", "Proprietary NVIDIA module 535 (no dma-buf), nvidia_peermem loaded")
    pair_machine(nvidia=PROPRIETARY_535, peermem=("nv_peer_mem",)).write(
        "nv-peer-mem", "Proprietary NVIDIA module 535, the legacy nv_peer_mem loaded")
    pair_machine(nvidia=OPEN_580, kernel="5.4.0-216-generic").write(
        "no-gdr", "Kernel 5.4 (no dma-buf import into RDMA), no peer-memory module")
    pair_machine(nvidia=None).write(
        "gdr-unknown", "No /proc/driver/nvidia/version readable, no peer-memory module: dma-buf unknown")
    pair_machine(acs={"0000:12:00.0": 0x1D, "0000:12:01.0": 0x1D, "0000:52:00.0": 0x1D, "0000:52:01.0": 0x1D}).write(
        "acs-redirect", "ACS redirects requests and completions on the switches' downstream ports; recorded as root")
    pair_machine(root=False).write("acs-unreadable", "Recorded without root: config space beyond 64 bytes unreadable")
    pair_machine(iommu="DMA-FQ").write("iommu", "The GPUs' IOMMU groups translate DMA (DMA-FQ)")

    # GH200 in CDMM: one Grace (node 0), the GPU's memory in no NUMA node, a
    # ConnectX-7 on another host bridge of the Grace.
    m = Machine({0: "0-71"}, kernel="6.8.0-1017-nvidia-64k", nvidia=OPEN_580_ARM)
    m.gpu("NVIDIA GH200 480GB", "pci0009:00", ["0009:00:00.0"], "0009:01:00.0", 0,
          affinity("0-71", "0", c2c=10, status=1, bw=45000))
    m.nic("mlx5_0", "pci0000:00", ["0000:00:00.0"], "0000:01:00.0", 0, netdev="ibp1s0")
    m.write("gh200-cdmm", "GH200 in CDMM (coherent driver-managed memory): no NUMA node of GPU memory; a NIC on the "
            "Grace's other host bridge")

    # DGX Spark (GB10): the GPU on its own host bridge, C2C 8 links; the
    # ConnectX-7's four RDMA functions on two other host bridges (NODE).
    m = Machine({0: "0-19"}, kernel="6.11.0-1016-nvidia", nvidia=OPEN_580_ARM)
    m.gpu("NVIDIA GB10", "pci000f:00", ["000f:00:00.0"], "000f:01:00.0", 0,
          affinity("0-19", "0", c2c=8, status=1, bw=30000))
    for j, (dom, f) in enumerate([(0, 0), (0, 1), (2, 0), (2, 1)]):
        m.nic(["rocep1s0f0", "rocep1s0f1", "roceP2p1s0f0", "roceP2p1s0f1"][j], "pci%04x:00" % dom,
              ["%04x:00:00.0" % dom], "%04x:01:00.%d" % (dom, f), 0,
              netdev=["enp1s0f0np0", "enp1s0f1np1", "enP2p1s0f0np0", "enP2p1s0f1np1"][j], link_layer="Ethernet")
    m.write("gb10", "DGX Spark (GB10): C2C 8 links active; `nvidia-smi topo -m` says NODE to the ConnectX-7")

    # x86 whose PCIe roots have no proximity: numa_node -1, local_cpulist all
    # CPUs; NVML's affinity names socket 1.
    m = Machine(SPR)
    for k in range(2):
        top = 0x80 + 0x10 * k
        m.gpu("NVIDIA H200", "pci0000:%02x" % top, ["0000:%02x:01.0" % top], "0000:%02x:00.0" % (top + 1), -1,
              affinity(SPR[1], "1"))
    m.nic("mlx5_0", "pci0000:a0", ["0000:a0:01.0"], "0000:a1:00.0", -1, netdev="ibp161s0")
    # Soft-RoCE over a netdev: a verbs device without a PCI function.
    m.files["/sys/class/infiniband/rxe0/ports/1/link_layer"] = "Ethernet\n"
    m.files["/sys/class/infiniband/rxe0/ports/1/state"] = "4: ACTIVE\n"
    m.files["/sys/class/infiniband/rxe0/device/uevent"] = "DRIVER=rdma_rxe\n"
    m.write("x86-numa-unknown", "x86, numa_node -1 (no proximity for the PCIe roots): NVML's affinity, socket 1; "
            "a soft-RoCE device (rxe0) without a PCI function")

    # The TransferBench#352 board with AMD GPUs: the KFD topology of
    # ../topologies-rocm/radeon-pcie-4.json, each GPU moved to a PCIe domain
    # of its own (KFD's "domain"), amdgpu exporting dma-buf.
    with open(os.path.join(HERE, "..", "topologies-rocm", "radeon-pcie-4.json")) as f:
        kfd = json.load(f)["files"]
    m = Machine(SPR, nvidia=None, cpu=EPYC_GENOA)
    m.files["/sys/module/amdgpu/initstate"] = "live\n"
    for path, text in kfd.items():
        k = int(path.split("/")[7]) - 1
        if k >= 0 and path.endswith("/properties") and "/io_links/" not in path and "/p2p_links/" not in path:
            text = text.replace("location_id %d\n" % int(text.split("location_id ")[1].split()[0]),
                                "location_id 768\n").replace("domain 0\n", "domain %d\n" % k)
        m.files[path] = text
    for k in range(4):
        root = "pci%04x:00" % k
        rp, up = "%04x:00:01.0" % k, "%04x:01:00.0" % k
        m.function(root, [rp, up, "%04x:02:00.0" % k], "%04x:03:00.0" % k, k // 2)
        for j in range(2):
            m.nic("mlx5_%d" % (2 * k + j), root, [rp, up, "%04x:02:%02x.0" % (k, j + 1)], "%04x:%02x:00.0" % (k, 4 + j),
                  k // 2, netdev="ibp%ds%d" % (k, j))
    m.nic("mlx5_8", "pci0000:00", ["0000:00:02.0"], "0000:80:00.0", 0, netdev="eno1np0", link_layer="Ethernet")
    m.write("rocm-transferbench-352", "TransferBench#352's board with 4 AMD GPUs (KFD topology), one PCIe domain "
            "each with two back-end NICs; a front-end NIC on domain 0's root complex; amdgpu exports dma-buf",
            nvml=False)

    # Four Intel Arc A770 (../topologies-xpu/arc-pcie-4.json's Level Zero
    # answers), two per socket behind a switch with a NIC each; xe loaded.
    with open(os.path.join(HERE, "..", "topologies-xpu", "arc-pcie-4.json")) as f:
        ze = json.load(f)["level_zero"]
    m = Machine(SPR, nvidia=None)
    m.files["/sys/module/xe/initstate"] = "live\n"
    for k, bus in enumerate(["03", "1a", "83", "9c"]):
        top = int(bus, 16) - 3
        root = "pci0000:%02x" % top
        rp, up = "0000:%02x:01.0" % top, "0000:%02x:00.0" % (top + 1)
        m.function(root, [rp, up, "0000:%02x:00.0" % (top + 2)], "0000:%s:00.0" % bus, k // 2)
        if k % 2 == 0:
            m.nic("irdma%d" % (k // 2), root, [rp, up, "0000:%02x:01.0" % (top + 2)], "0000:%02x:00.0" % (top + 4),
                  k // 2, netdev="ens%df0" % (top + 4), link_layer="Ethernet")
    m.write("xpu-arc-4", "4 Intel Arc A770 (Level Zero), two per socket, an E810 (irdma) behind the first card's "
            "switch on each socket; xe exports dma-buf", nvml=False, level_zero=ze)

    # The lead's H200 virtual machine: numa_node -1 everywhere, one node,
    # NVML's affinity answered with every bit clear, no NUMA node id, no C2C
    # field; ib_core loaded and /sys/class/infiniband empty.
    m = Machine({0: "0-15"}, kernel="6.8.0-87-generic", cpu=EMERALD_RAPIDS)
    m.files["/sys/module/ib_core/initstate"] = "live\n"
    m.gpu("NVIDIA H200", "pci0000:00", [], "0000:00:06.0", -1,
          {"cpu_affinity": "", "memory_affinity": "", "numa_node_id": NS, "c2c_link_count": NS})
    m.write("h200-vm", "1x H200 in a virtual machine (as read there): numa_node -1, NVML's CPU and memory affinity "
            "all-zero, NumaNodeId and C2C not supported; /sys/class/infiniband present but empty")

    # No RDMA device: no /sys/class/infiniband at all.
    m = Machine({0: "0-15"})
    m.gpu("NVIDIA H200", "pci0000:00", ["0000:00:01.0"], "0000:01:00.0", 0, affinity("0-15", "0"))
    m.write("no-nic", "One GPU, no RDMA device (/sys/class/infiniband absent)")


if __name__ == "__main__":
    main()
