#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""dmaconn_placement_detect() on the machines of
tests/topologies-placement-review/ (topologies built apart from the
library's own fixtures): each answer (test_placement's dump) holds the
facts `nvidia-smi topo -m` and NCCL would give for the machine, written
from its description (FACTS), and none of the lines in NEVER (claims that
the files do not support).

Each machine is also recorded while replayed (`dmaconn --record`): the
recording answers the same.

usage: placement_review_test.py TEST_PLACEMENT DMACONN_CLI [WRAPPER...]
(WRAPPER: a command to run test_placement under, e.g. valgrind)
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, "topologies-placement-review")
sys.path.insert(0, os.path.join(HERE, "topologies-placement"))
from gen import cpulist as kernel_list  # noqa: E402  (the kernel's list form of a set of CPUs)


def slurm_mask(cpus):
    return "mask_cpu:0x%x" % sum(1 << c for c in cpus)


def cpu_facts(i, cpus, source, node=None):
    facts = ["device %d cpuset=%s" % (i, kernel_list(cpus)), "device %d cpu_source=%s" % (i, source),
             "device %d slurm_cpu_bind=%s" % (i, slurm_mask(cpus))]
    if node is None:
        facts.append("device %d numactl=--physcpubind=%s" % (i, kernel_list(cpus)))
    else:
        facts += ["device %d cpu_numa_node=%d" % (i, node),
                  "device %d numactl=--cpunodebind=%d --membind=%d" % (i, node, node)]
    return facts


def link(i, n, path, gdr=None, reason=None):
    out = ["link %d %d path=%s" % (i, n, path)]
    out += ["link %d %d gdr=%s" % (i, n, gdr)] if gdr else []
    out += ["link %d %d reason=%s" % (i, n, reason)] if reason else []
    return out


FAR = "path_beyond_gdr_level"
EVEN, ODD = range(0, 1024, 2), range(1, 1024, 2)
SPR0 = list(range(0, 56)) + list(range(112, 168))
SPR1 = list(range(56, 112)) + list(range(168, 224))

FACTS = {
    "hgx-2nic-per-switch": sum((link(k, 2 * k, "PIX", "dmabuf") + link(k, 2 * k + 1, "PIX", "dmabuf")
                                for k in range(4)), []) +
    link(0, 2, "NODE", "none", FAR) + link(0, 4, "SYS", "none", FAR) + link(3, 4, "NODE", "none", FAR) +
    ["order 0 = mlx5_0 mlx5_1 mlx5_2 mlx5_3 mlx5_4 mlx5_5 mlx5_6 mlx5_7",
     "order 1 = mlx5_2 mlx5_3 mlx5_0 mlx5_1 mlx5_4 mlx5_5 mlx5_6 mlx5_7",
     "order 3 = mlx5_6 mlx5_7 mlx5_4 mlx5_5 mlx5_0 mlx5_1 mlx5_2 mlx5_3",
     "nic 0 paths = X PIX NODE NODE SYS SYS SYS SYS"] + cpu_facts(2, SPR1, "sysfs", 1),
    "two-level-switch": link(0, 0, "PXB", "dmabuf") + link(1, 0, "PXB", "dmabuf") + link(0, 1, "PHB", "none", FAR) +
    link(0, 2, "SYS", "none", FAR) + link(0, 3, "NODE", "none", FAR) +
    ["order 0 = mlx5_0 mlx5_1 mlx5_3 mlx5_2", "nic 0 paths = X PHB SYS NODE", "nic 3 paths = NODE NODE SYS X"],
    "sriov-bond-efa": link(0, 1, "PIX", "dmabuf") + link(0, 2, "PIX", "dmabuf") + link(0, 3, "PIX", "dmabuf") +
    link(1, 0, "PIX", "dmabuf") + link(1, 4, "NODE", "none", FAR) + link(0, 4, "SYS", "none", FAR) +
    ["nic 2 pci_bus_id=0000:14:00.2", "nic 3 pci_bus_id=0000:14:00.3", "nic 4 pci_bus_id=0000:51:00.0",
     "nic 4 netdev=bond0", "nic 0 link_layer=Unknown", "nic 1 paths = SYS X PIX PIX SYS",
     "order 0 = mlx5_0 mlx5_1 mlx5_2 efa_0 mlx5_bond_0", "order 1 = efa_0 mlx5_bond_0 mlx5_0 mlx5_1 mlx5_2"],
    # One NUMA node: NODE, never SYS, whatever numa_node -1 says.
    "one-node-numa-minus-one": link(0, 0, "NODE", "none", FAR) + link(0, 1, "PHB", "none", FAR) +
    link(1, 0, "NODE") + link(1, 1, "NODE") + ["nic 0 paths = X NODE", "order 0 = mlx5_1 mlx5_0",
                                               "device 1 numa_node=-1"] + cpu_facts(1, range(32), "nvml", 0),
    # One CPU-bearing node (the other is the GPU's memory): NODE, C2C.
    "gh200-numa-nic-minus-one": ["link 0 0 path=C2C", "link 0 0 pcie_path=NODE", "link 0 0 gdr=dmabuf",
                                 "device 0 memory_mode=memory_only", "device 0 cpu_numa_node=0"],
    "cpus-round-robin": cpu_facts(0, EVEN, "sysfs", 0) + cpu_facts(1, ODD, "sysfs", 1),
    "no-numa-long-affinity": cpu_facts(0, EVEN, "nvml"),
    "two-node-no-proximity": cpu_facts(0, range(224), "sysfs") + ["device 0 numa_node=-1"],
    # More NICs than kept: the first 1024 by name, and a warning ("~":
    # a line holding the text).
    "many-nics": ["devices 1 nics 1024", "nic 1023 name=rxe1023", "~warning placement: 1030 RDMA devices"],
    # RCCL's GDR by peer memory: the amdkfd client.
    "rocm-amdkfd-peermem": ["node dmabuf=no", "node peermem_module=amdkfd", "link 0 0 gdr=peermem",
                            "link 0 0 gdr_module=amdkfd", "link 3 7 gdr=peermem", "link 0 8 reason=" + FAR],
    "cpus-above-1024": cpu_facts(0, [c for c in range(1024, 1152) if not 1100 <= c < 1110], "sysfs", 1),
    "visible-reordered": ["device 0 pci_bus_id=0000:93:00.0", "device 1 pci_bus_id=0000:13:00.0",
                          "order 0 = mlx5_1 mlx5_0", "order 1 = mlx5_0 mlx5_1"] +
    link(0, 1, "PIX", "dmabuf") + link(0, 0, "SYS", "none", FAR) + cpu_facts(0, SPR1, "sysfs", 1),
    # A MIG instance named first sits where its GPU (GPU 1) does.
    "mig": ["device 0 uuid=MIG-e81f4b09-2c6d-5a73-9b45-7d0e1f2a3c64", "device 0 pci_bus_id=0000:93:00.0",
            "device 1 pci_bus_id=0000:13:00.0", "order 0 = mlx5_1 mlx5_0"] + link(0, 1, "PIX", "dmabuf") +
    link(1, 0, "PIX", "dmabuf") + cpu_facts(0, SPR1, "sysfs", 1),
    # ACS redirect off the path and switch ports without ACS leave GDR on;
    # the NIC's translating IOMMU group turns it off.
    "acs-iommu-review": link(0, 0, "PIX", "dmabuf") + link(1, 1, "PIX", "dmabuf") +
    link(2, 2, "PIX", "none", "iommu_translating") + link(0, 1, "NODE", "none", FAR),
    # The GPU's numa_node is garbage: NODE or SYS to another host bridge is
    # unknown (both beyond the GDR level); the PIX NIC is still PIX.
    "hostile": ["devices 1 nics 69", "nic 0 name=badslot", "nic 68 name=nouevent", "nic 67 name=" + "n" * 200] +
    link(0, 1, "PIX", "dmabuf") + link(0, 67, "PIX", "dmabuf") + ["link 0 2 gdr=none", "link 0 2 reason=" + FAR] +
    cpu_facts(0, SPR0, "nvml", 0) +
    ["nic 1 netdev=" + ",".join(sorted(["ibp20s0"] + ["ens20f0npf0vf%d" % v for v in range(80)]))],
}
NEVER = {
    "one-node-numa-minus-one": ["path=SYS", "paths = X SYS", "paths = SYS"],
    "no-numa-long-affinity": ["cpu_numa_node", "--cpunodebind"],
    "two-node-no-proximity": ["cpu_numa_node", "--cpunodebind"],
    "hostile": ["device 0 numa_node=", "link 0 2 path=", "link 0 2 pcie_path=", "nic 0 pci_bus_id",
                "nic 0 numa_node", "nic 68 pci_bus_id"],
}


def main():
    binary, cli, wrapper = sys.argv[1], sys.argv[2], sys.argv[3:]
    tmp = tempfile.mkdtemp(prefix="dmaconn-placement-review-")
    names = sorted(f[:-5] for f in os.listdir(DIR) if f.endswith(".json"))
    if set(names) != set(FACTS):
        print("FAIL machines and FACTS differ: %s" % sorted(set(names) ^ set(FACTS)))
        return 1
    failures = 0
    env = dict(os.environ, DMACONN_QUIET="1")
    env.pop("DMACONN_REPLAY", None)
    for name in names:
        kind = "rocm" if name.startswith("rocm-") else "cuda"
        p = subprocess.run(wrapper + [binary, kind, os.path.join(DIR, name + ".json")], capture_output=True,
                           text=True, env=env, timeout=300)
        lines = set(p.stdout.splitlines())
        missing = [f for f in FACTS[name] if f not in lines and
                   not (f.startswith("~") and any(f[1:] in l for l in lines))]
        found = [l for l in sorted(lines) for bad in NEVER.get(name, []) if bad in l]
        recording = os.path.join(tmp, name + ".json")
        rec = subprocess.run([cli, "--record", recording], capture_output=True, text=True, timeout=300,
                             env=dict(env, DMACONN_REPLAY=os.path.join(DIR, name + ".json")))
        again = subprocess.run([binary, kind, recording], capture_output=True, text=True, env=env, timeout=300)
        if rec.returncode or again.stdout != p.stdout:
            missing.append("its recording answers otherwise (dmaconn --record exited %d)" % rec.returncode)
        if os.path.exists(recording):
            os.unlink(recording)
        if p.returncode or missing or found:
            failures += 1
            print("FAIL %s (rc %d)" % (name, p.returncode))
            for f in missing:
                print("  missing %r" % f[:300])
            for f in found:
                print("  never   %r" % f[:300])
            if p.returncode:
                print("  " + p.stderr.strip()[-2000:].replace("\n", "\n  "))
        else:
            print("ok   %s (%d facts)" % (name, len(FACTS[name])))
    os.rmdir(tmp)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
