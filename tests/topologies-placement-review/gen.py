#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the machines of tests/topologies-placement-review/: topologies
built independently of tests/topologies-placement/ (whose Machine class
writes the kernel's files the same way) to check dmaconn_placement_detect()
against what `nvidia-smi topo -m` and NCCL would say, and hostile inputs.
tests/placement_review_test.py holds the facts each must show.  Run it from
anywhere; it rewrites the .json files beside it.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "topologies-placement"))
import gen  # noqa: E402
from gen import Machine, affinity, cpulist, SPR, NS  # noqa: E402

gen.HERE = HERE  # Machine.write writes here


def switch_pair(m, top, numa, gpus, nics, gpu_name="NVIDIA H100 80GB HBM3", cpus=None, nic_kw=None):
    """One PCIe switch under root complex pci0000:TOP: each GPU and NIC on a
    downstream port of its own (GPUs first)."""
    root = "pci0000:%02x" % top
    rp, up = "0000:%02x:01.0" % top, "0000:%02x:00.0" % (top + 1)
    port = 0
    for g in gpus:
        m.gpu(gpu_name, root, [rp, up, "0000:%02x:%02x.0" % (top + 2, port)], "0000:%02x:00.0" % (top + 3 + port),
              numa, affinity(cpus or SPR[numa], str(numa)))
        port += 1
    for n in nics:
        m.nic(n, root, [rp, up, "0000:%02x:%02x.0" % (top + 2, port)], "0000:%02x:00.0" % (top + 3 + port), numa,
              netdev="ibp%ds0" % (top + 3 + port), **(nic_kw or {}))
        port += 1


def main():
    # HGX H100 with two ConnectX-7 per PCIe switch: four switches, one GPU
    # and two NICs each; two switches per socket.
    m = Machine(SPR, peermem=("nvidia_peermem",))
    for k in range(4):
        switch_pair(m, 0x10 + 0x20 * k, k // 2, ["g%d" % k], ["mlx5_%d" % (2 * k), "mlx5_%d" % (2 * k + 1)])
    m.write("hgx-2nic-per-switch", "HGX: 4 GPUs, each behind a PCIe switch with two ConnectX-7 (PIX to both)")

    # DGX A100 style: two switch levels; GPU0 and GPU1 behind the second
    # level, the NIC on the first level's other port (PXB), one more NIC on
    # a root port of the same host bridge (PHB), one on the other socket's
    # (SYS), one on another host bridge of socket 0 (NODE).
    m = Machine(SPR, peermem=("nvidia_peermem",))
    root, rp, l1u = "pci0000:00", "0000:00:01.0", "0000:01:00.0"
    l1a, l2u = "0000:02:00.0", "0000:03:00.0"
    for g in range(2):
        m.gpu("NVIDIA A100-SXM4-80GB", root, [rp, l1u, l1a, l2u, "0000:04:%02x.0" % g], "0000:%02x:00.0" % (5 + g), 0,
              affinity(SPR[0], "0"))
    m.nic("mlx5_0", root, [rp, l1u, "0000:02:01.0"], "0000:08:00.0", 0, netdev="ibp8s0")
    m.nic("mlx5_1", root, ["0000:00:02.0"], "0000:09:00.0", 0, netdev="ibp9s0")
    m.nic("mlx5_2", "pci0000:80", ["0000:80:01.0"], "0000:81:00.0", 1, netdev="ibp129s0")
    m.nic("mlx5_3", "pci0000:20", ["0000:20:01.0"], "0000:21:00.0", 0, netdev="ibp33s0")
    m.write("two-level-switch", "Two switch levels: GPUs behind the second (PXB to the first level's NIC), NICs at "
            "PHB, NODE and SYS")

    # A ConnectX-6 Dx with SR-IOV: its PF and two VFs (functions of the
    # same device, under the switch port the GPU shares), a RoCE LAG bond
    # (mlx5_bond_0, its device link the first PF) on socket 1, an EFA device
    # behind socket 1's switch with GPU 1.
    m = Machine(SPR)
    switch_pair(m, 0x10, 0, ["g0"], [])
    base = "/sys/class/infiniband/"
    nic_dir = ["0000:10:01.0", "0000:11:00.0", "0000:12:01.0"]
    for name, fn in [("mlx5_0", 0), ("mlx5_1", 2), ("mlx5_2", 3)]:
        m.nic(name, "pci0000:10", nic_dir, "0000:14:00.%d" % fn, 0, netdev="ens20f%dnp0" % fn if fn == 0 else
              "ens20f0v%d" % (fn - 2), link_layer="Ethernet")
    m.nic("mlx5_bond_0", "pci0000:50", ["0000:50:01.0"], "0000:51:00.0", 1, netdev="bond0", link_layer="Ethernet")
    m.function("pci0000:50", ["0000:50:01.0"], "0000:51:00.1", 1)
    switch_pair(m, 0x60, 1, ["g1"], [])
    m.nic("efa_0", "pci0000:60", ["0000:60:01.0", "0000:61:00.0", "0000:62:01.0"], "0000:64:00.0", 1,
          link_layer="Unknown", state="4: ACTIVE")
    m.files[base + "efa_0/device/uevent"] = ("DRIVER=efa\nPCI_CLASS=20000\nPCI_ID=1D0F:EFA1\n"
                                             "PCI_SLOT_NAME=0000:64:00.0\nMODALIAS=pci:v00001D0Fd0000EFA1\n")
    m.write("sriov-bond-efa", "SR-IOV: a PF and 2 VFs beside GPU 0; a RoCE LAG bond on socket 1; an EFA device "
            "beside GPU 1")

    # One socket, one NUMA node; the NIC's root complex has no proximity
    # (numa_node -1) while the GPU's says 0: on one node the NIC is NODE.
    m = Machine({0: "0-31"}, peermem=("nvidia_peermem",))
    m.gpu("NVIDIA L40S", "pci0000:00", ["0000:00:01.0"], "0000:01:00.0", 0, affinity("0-31", "0"))
    m.nic("mlx5_0", "pci0000:40", ["0000:40:01.0"], "0000:41:00.0", -1, netdev="ens65np0", link_layer="Ethernet")
    m.nic("mlx5_1", "pci0000:00", ["0000:00:02.0"], "0000:02:00.0", -1, netdev="ens2np0", link_layer="Ethernet")
    m.gpu("NVIDIA L40S", "pci0000:60", ["0000:60:01.0"], "0000:61:00.0", -1, affinity("0-31", "0"))
    m.write("one-node-numa-minus-one", "One NUMA node; two NICs and one GPU with numa_node -1, one GPU with 0")

    # GH200 in NUMA mode: one Grace (node 0, the one CPU-bearing node), the
    # GPU's memory a CPU-less node (1); the NIC's root says numa_node -1:
    # it can only hang off the one CPU, NODE over PCIe, C2C as NCCL counts.
    m = Machine({0: "0-71", 1: ""}, kernel="6.8.0-1017-nvidia-64k", nvidia=gen.OPEN_580_ARM)
    m.gpu("NVIDIA GH200 480GB", "pci0009:00", ["0009:00:00.0"], "0009:01:00.0", 0,
          affinity("0-71", "0", numa_id=1, c2c=10, status=1, bw=45000))
    m.nic("mlx5_0", "pci0000:00", ["0000:00:00.0"], "0000:01:00.0", -1, netdev="ibp1s0")
    m.write("gh200-numa-nic-minus-one", "GH200 in NUMA mode (HBM node 1, CPU-less), a NIC whose numa_node is -1")

    # A 2-socket box with 512 CPUs numbered round robin (node 0 even, node 1
    # odd): the cpulists are longer than 1 KiB.
    even, odd = list(range(0, 1024, 2)), list(range(1, 1024, 2))
    nodes = {0: ",".join(map(str, even)), 1: ",".join(map(str, odd))}
    m = Machine(nodes)
    m.gpu("NVIDIA H200", "pci0000:10", ["0000:10:01.0"], "0000:11:00.0", 0, affinity(nodes[0], "0"))
    m.gpu("NVIDIA H200", "pci0000:90", ["0000:90:01.0"], "0000:91:00.0", 1, affinity(nodes[1], "1"))
    m.write("cpus-round-robin", "2 sockets, 1024 CPUs numbered round robin: node 0 even, node 1 odd (cpulists "
            "over 1 KiB)")

    # No NUMA support in the kernel (no /sys/devices/system/node), NVML's
    # affinity the even CPUs below 1024 (a list of 2.3 KiB): no node to
    # bind, the CPUs named one by one.
    m = Machine({0: ",".join(map(str, even))})
    for k in list(m.files):
        if k.startswith("/sys/devices/system/node/"):
            del m.files[k]
    m.gpu("NVIDIA H200", "pci0000:10", ["0000:10:01.0"], "0000:11:00.0", -1, affinity(nodes[0], "0"))
    m.write("no-numa-long-affinity", "No NUMA nodes listed, numa_node -1, NVML's affinity every even CPU below "
            "1024")

    # Two sockets, no proximity for the GPU's root (numa_node -1,
    # local_cpulist every CPU) and NVML's affinity all-zero (as in a virtual
    # machine): the CPUs are both nodes', no node is the GPU's.
    m = Machine(SPR)
    m.gpu("NVIDIA H200", "pci0000:10", ["0000:10:01.0"], "0000:11:00.0", -1,
          {"cpu_affinity": "", "memory_affinity": "", "numa_node_id": NS, "c2c_link_count": NS})
    m.write("two-node-no-proximity", "2 sockets, numa_node -1 (local_cpulist every CPU), NVML's affinity all-zero")

    # CPUs above 1024 with holes: node 1 holds 1024-1151 without 1100-1109.
    big = {0: "0-127", 1: cpulist([c for c in range(1024, 1152) if not 1100 <= c < 1110])}
    m = Machine(big)
    m.gpu("NVIDIA H200", "pci0000:90", ["0000:90:01.0"], "0000:91:00.0", 1, affinity(big[1], "1"))
    m.write("cpus-above-1024", "Node 1's CPUs 1024-1151 with a hole at 1100-1109")

    # CUDA_VISIBLE_DEVICES=1,0 reorders the runtime's devices.
    m = Machine(SPR, peermem=("nvidia_peermem",))
    switch_pair(m, 0x10, 0, ["g0"], ["mlx5_0"])
    switch_pair(m, 0x90, 1, ["g1"], ["mlx5_1"])
    m.write("visible-reordered", "Two GPU+NIC pairs, one per socket; CUDA_VISIBLE_DEVICES=1,0")
    with open(os.path.join(HERE, "visible-reordered.json")) as f:
        doc = json.load(f)
    doc["environment"] = {"CUDA_VISIBLE_DEVICES": "1,0", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    with open(os.path.join(HERE, "visible-reordered.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    # MIG: GPU 1 in MIG mode, CUDA_VISIBLE_DEVICES names its second
    # instance, then GPU 0: the instance sits where its GPU does.
    m = Machine(SPR, peermem=("nvidia_peermem",))
    switch_pair(m, 0x10, 0, ["g0"], ["mlx5_0"], gpu_name="NVIDIA A100-SXM4-80GB")
    switch_pair(m, 0x90, 1, ["g1"], ["mlx5_1"], gpu_name="NVIDIA A100-SXM4-80GB")
    m.devices[1]["mig_mode"] = [1, 1]
    m.devices[1]["mig_devices"] = [
        {"uuid": "MIG-5c2a7d31-9e4b-5f60-8a17-3b9c0d4e2f18", "gpu_instance_id": 1, "compute_instance_id": 0},
        {"uuid": "MIG-e81f4b09-2c6d-5a73-9b45-7d0e1f2a3c64", "gpu_instance_id": 2, "compute_instance_id": 0}]
    m.write("mig", "GPU 1 in MIG mode with two instances; CUDA_VISIBLE_DEVICES names the second, then GPU 0")
    with open(os.path.join(HERE, "mig.json")) as f:
        doc = json.load(f)
    doc["dmaconn_topology"] = 2
    doc["environment"] = {"CUDA_VISIBLE_DEVICES": "MIG-e81f4b09-2c6d-5a73-9b45-7d0e1f2a3c64,0"}
    with open(os.path.join(HERE, "mig.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    # ACS read as root: redirect set on the root ports above the switches
    # (not on the GPU-NIC path, which turns at the switch); the second
    # switch's downstream ports have no ACS capability at all (nothing to
    # redirect); the third pair's NIC is in a translating IOMMU group, the
    # GPU's is identity.
    m = Machine(SPR, peermem=("nvidia_peermem",))
    switch_pair(m, 0x10, 0, ["g0"], ["mlx5_0"], nic_kw={"acs": {"0000:10:01.0": 0x1D}})
    m.files["/sys/devices/pci0000:10/0000:10:01.0/config"] = m.files["/sys/devices/pci0000:10/0000:10:01.0/config"]
    switch_pair(m, 0x30, 0, ["g1"], ["mlx5_1"])
    for port in ("0000:32:00.0", "0000:32:01.0"):
        m.files["/sys/devices/pci0000:30/0000:30:01.0/0000:31:00.0/%s/config" % port] = {"hex": "b31a" + "00" * 4094}
    switch_pair(m, 0x90, 1, ["g2"], ["mlx5_2"])
    m.files["/sys/bus/pci/devices/0000:93:00.0/iommu_group/type"] = "identity\n"
    m.files["/sys/bus/pci/devices/0000:94:00.0/iommu_group/type"] = "DMA-FQ\n"
    m.write("acs-iommu-review", "ACS redirect only above the switches, switch ports without ACS, a NIC in a "
            "translating IOMMU group beside a GPU in an identity one; recorded as root")

    # 1030 verbs devices (soft-RoCE, no PCI function): more than the 1024
    # the placement keeps.
    m = Machine({0: "0-15"}, peermem=("nvidia_peermem",))
    m.gpu("NVIDIA H200", "pci0000:00", ["0000:00:01.0"], "0000:01:00.0", 0, affinity("0-15", "0"))
    for k in range(1030):
        m.files[base + "rxe%04d/ports/1/state" % k] = "4: ACTIVE\n"
    m.write("many-nics", "1030 soft-RoCE devices")

    # ROCm on kernel 5.4 (no dma-buf import into RDMA) with the amdkfd
    # peer-memory client (amdgpu-dkms beside MLNX_OFED), as RCCL finds it
    # (/sys/kernel/mm/memory_peers/amdkfd/version): GDR by peer memory.
    with open(os.path.join(HERE, "..", "topologies-placement", "rocm-transferbench-352.json")) as f:
        doc = json.load(f)
    doc["description"] = "rocm-transferbench-352 on kernel 5.4 with the amdkfd peer-memory client"
    doc["files"]["/proc/sys/kernel/osrelease"] = "5.4.0-216-generic\n"
    doc["files"]["/sys/kernel/mm/memory_peers/amdkfd/version"] = "1.0\n"
    with open(os.path.join(HERE, "rocm-amdkfd-peermem.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    # Hostile files: garbage numa_node and local_cpulist, a NIC without
    # uevent, one whose PCI_SLOT_NAME is garbage, one with a 200-character
    # name, node1's cpulist garbage, 70 NICs in all.
    m = Machine(SPR, peermem=("nvidia_peermem",))
    switch_pair(m, 0x10, 0, ["g0"], ["mlx5_0"])
    m.files["/sys/bus/pci/devices/0000:13:00.0/numa_node"] = "zero\n"
    m.files["/sys/bus/pci/devices/0000:13:00.0/local_cpulist"] = "0-55,x\n"
    m.files["/sys/devices/system/node/node1/cpulist"] = "56-\n"
    for k in range(1, 66):
        m.nic("mlx5_%d" % k, "pci0000:40", ["0000:40:%02x.%d" % (k % 32, k // 32)],
              "0000:%02x:00.0" % (0x41 + k), 0, netdev="eth%d" % k, link_layer="Ethernet")
    m.files[base + "nouevent/ports/1/state"] = "4: ACTIVE\n"
    m.files[base + "badslot/device/uevent"] = "DRIVER=mlx5_core\nPCI_SLOT_NAME=0000:zz:00.0\n"
    long_name = "n" * 200
    m.nic(long_name, "pci0000:10", ["0000:10:01.0", "0000:11:00.0", "0000:12:07.0"], "0000:1a:00.0", 0)
    m.files[base + "mlx5_1/ports/1/rate"] = "\x01\x7f junk\n"
    # A PF in switchdev mode: its netdev and 80 VF representors.
    for v in range(80):
        m.files[base + "mlx5_0/device/net/ens20f0npf0vf%d/ifindex" % v] = "%d\n" % (100 + v)
    m.write("hostile", "Garbage numa_node, local_cpulist and node cpulist, NICs without uevent or with a "
            "garbage slot, a 200-character name, control characters, 70 NICs")


if __name__ == "__main__":
    main()
