#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""dmaconn_placement_detect() on every machine of tests/topologies-placement/:
the whole answer (test_placement's dump) equals NAME.expected, and the facts
each machine was built to show (FACTS below, written from the machine's
description, not from the output) hold.

Each machine is also recorded while replayed (`dmaconn --record`, which
runs the placement too): the recording answers the same.

usage: placement_test.py TEST_PLACEMENT DMACONN_CLI [--write]  (--write
rewrites the expected answers from the library's output, to be read before
committing)
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, "topologies-placement")


def order(i, *nics):
    return "order %d = %s" % (i, " ".join(nics))


def dgx_facts():
    facts = ["node dmabuf=yes", "node peermem_module=nvidia_peermem"]
    for k in range(8):
        facts += ["link %d %d path=PIX" % (k, k), "link %d %d gdr=dmabuf" % (k, k),
                  "device %d cpu_numa_node=%d" % (k, k // 4),
                  "device %d cpuset=%s" % (k, "0-55,112-167" if k < 4 else "56-111,168-223"),
                  "device %d cpu_source=sysfs" % k, "device %d memory_mode=none" % k]
    facts += [l for k in range(8) for l in ("order %d = mlx5_%d" % (k, k),)]
    return facts


FACTS = {
    "dgx-h100": dgx_facts() + ["nic 8 link_layer=Ethernet", "link 0 8 path=NODE",
                               "link 0 8 reason=path_beyond_gdr_level", "link 4 8 path=SYS"],
    "dgx-h100-8nic": ["devices 8 nics 8"] + ["link %d %d path=PIX" % (k, k) for k in range(8)],
    "gb200-tray": [
        "device 0 cpu_numa_node=0", "device 0 numactl=--cpunodebind=0 --membind=0",
        "device 0 memory_numa_node=2", "device 0 memory_mode=memory_only",
        "device 3 cpu_numa_node=1", "device 3 memory_numa_node=5",
        "device 0 c2c_links=10", "device 0 c2c_status=active", "device 0 c2c_max_bw_mbs=45000",
        "link 0 0 path=C2C", "link 0 0 pcie_path=NODE", "link 0 0 gdr=dmabuf",
        "link 0 2 path=SYS", "link 0 2 gdr=none", "link 2 2 path=C2C", "link 2 2 gdr=dmabuf",
    ],
    "transferbench-352": [
        order(0, "mlx5_0", "mlx5_1", "mlx5_8"), order(1, "mlx5_2", "mlx5_3"),
        order(2, "mlx5_4", "mlx5_5"), order(3, "mlx5_6", "mlx5_7"),
        "link 0 0 path=PIX", "link 0 1 path=PIX", "link 0 8 path=PHB", "link 3 8 path=SYS",
        "link 1 2 gdr=dmabuf", "link 1 3 gdr=dmabuf", "link 1 8 gdr=none",
    ],
    "peermem-only": ["node dmabuf=no", "node peermem_module=nvidia_peermem", "link 0 0 gdr=peermem",
                     "link 0 0 gdr_module=nvidia_peermem", "link 1 1 gdr=peermem"],
    "nv-peer-mem": ["node dmabuf=no", "node peermem_module=nv_peer_mem", "link 0 0 gdr_module=nv_peer_mem"],
    "no-gdr": ["node dmabuf=no", "link 0 0 path=PIX", "link 0 0 gdr=none", "link 0 0 reason=no_gdr_mechanism"],
    "gdr-unknown": ["node dmabuf=unknown", "link 0 0 gdr=none", "link 0 0 reason=gdr_mechanism_unknown"],
    "acs-redirect": ["link 0 0 path=PIX", "link 0 0 gdr=none", "link 0 0 reason=acs_redirect",
                     "link 1 1 reason=acs_redirect"],
    "acs-unreadable": ["link 0 0 path=PIX", "link 0 0 gdr=none", "link 0 0 reason=acs_unknown"],
    "iommu": ["link 0 0 gdr=none", "link 0 0 reason=iommu_translating"],
    "gh200-cdmm": ["device 0 memory_mode=cdmm", "device 0 cpu_numa_node=0", "link 0 0 path=C2C",
                   "link 0 0 gdr=dmabuf"],
    "gb10": ["device 0 c2c_links=8", "device 0 c2c_status=active"] +
            ["link 0 %d path=C2C" % k for k in range(4)] + ["link 0 %d pcie_path=NODE" % k for k in range(4)] +
            ["link 0 %d gdr=dmabuf" % k for k in range(4)],
    "x86-numa-unknown": ["device 0 cpu_source=nvml", "device 0 cpu_numa_node=1", "device 0 cpuset=56-111,168-223",
                         "device 0 numactl=--cpunodebind=1 --membind=1", "device 1 cpu_source=nvml",
                         "device 0 numa_node=-1", "nic 1 name=rxe0", "link 0 1 gdr=none",
                         "link 0 1 reason=path_beyond_gdr_level", order(0, "mlx5_0", "rxe0")],
    "rocm-transferbench-352": [
        "node dmabuf=yes", order(0, "mlx5_0", "mlx5_1", "mlx5_8"), order(1, "mlx5_2", "mlx5_3"),
        order(2, "mlx5_4", "mlx5_5"), order(3, "mlx5_6", "mlx5_7"), "device 0 pci_bus_id=0000:03:00.0",
        "device 3 pci_bus_id=0003:03:00.0", "link 2 4 path=PIX", "link 2 4 gdr=dmabuf", "link 2 8 path=SYS",
        "device 2 cpu_numa_node=1"],
    "xpu-arc-4": ["devices 4 nics 2", "node dmabuf=yes", "link 0 0 path=PIX", "link 0 0 gdr=dmabuf",
                  "link 1 0 path=NODE", "link 1 0 reason=path_beyond_gdr_level", "link 2 1 path=PIX",
                  "device 2 cpu_numa_node=1", order(1, "irdma0", "irdma1")],
    "h200-vm": ["devices 1 nics 0", "node nics_reason=no_rdma_nic", "device 0 numa_node=-1",
                "device 0 cpuset=0-15", "device 0 cpu_source=sysfs", "device 0 cpu_numa_node=0",
                "device 0 numactl=--cpunodebind=0 --membind=0", "device 0 slurm_cpu_bind=mask_cpu:0xffff",
                "device 0 pcie_root=pci0000:00", "device 0 memory_mode=none"],
    "no-nic": ["devices 1 nics 0", "node nics_reason=no_rdma_class", "device 0 cpuset=0-15"],
}
# Lines no answer may hold.
NEVER = {
    "gb200-tray": ["device 0 cpu_numa_node=2", "numactl=--cpunodebind=2", "numactl=--cpunodebind=3"],
    "transferbench-352": [order(k, "mlx5_8") for k in range(4)],
    "rocm-transferbench-352": [order(k, "mlx5_8") for k in range(4)] + ["peermem"],
    "x86-numa-unknown": ["link 0 1 path=", "nic 1 pci_bus_id="],
    "h200-vm": ["memory_numa_node", "c2c_"],
}


def dump(binary, path):
    base = os.path.basename(path)
    kind = "rocm" if base.startswith("rocm-") else "xpu" if base.startswith("xpu-") else "cuda"
    env = dict(os.environ, DMACONN_QUIET="1")
    env.pop("DMACONN_REPLAY", None)
    p = subprocess.run([binary, kind, path], capture_output=True, text=True, env=env, timeout=60)
    lines = [l for l in p.stdout.splitlines() if not l.startswith("test_placement:")]
    return p.returncode, lines, p.stderr


def main():
    binary, cli, write = sys.argv[1], sys.argv[2], "--write" in sys.argv[3:]
    tmp = tempfile.mkdtemp(prefix="dmaconn-placement-")
    failures = 0
    names = sorted(f[:-5] for f in os.listdir(DIR) if f.endswith(".json"))
    missing = set(FACTS) - set(names)
    if missing or set(names) - set(FACTS):
        print("FAIL machines and FACTS differ: %s" % sorted(missing ^ (set(names) - set(FACTS))))
        return 1
    for name in names:
        rc, lines, err = dump(binary, os.path.join(DIR, name + ".json"))
        expected_file = os.path.join(DIR, name + ".expected")
        if write and rc == 0:
            with open(expected_file, "w") as f:
                f.write("\n".join(lines) + "\n")
        problems = []
        if rc != 0:
            problems.append("test_placement exited %d: %s" % (rc, err.strip()))
        with open(expected_file) if os.path.exists(expected_file) else open(os.devnull) as f:
            expected = f.read().splitlines()
        if lines != expected:
            for k in range(max(len(lines), len(expected))):
                got = lines[k] if k < len(lines) else "(none)"
                want = expected[k] if k < len(expected) else "(none)"
                if got != want:
                    problems.append("line %d: got %r, expected %r" % (k + 1, got, want))
                    break
        recording = os.path.join(tmp, name + ".json")
        env = dict(os.environ, DMACONN_QUIET="1", DMACONN_REPLAY=os.path.join(DIR, name + ".json"))
        rec = subprocess.run([cli, "--record", recording], capture_output=True, text=True, env=env, timeout=120)
        if rec.returncode != 0:
            problems.append("dmaconn --record exited %d: %s" % (rec.returncode, rec.stderr.strip()))
        elif dump(binary, recording)[1] != lines:
            problems.append("its recording answers otherwise")
        text = "\n".join(lines)
        # An order fact names the nearest NICs: a prefix of the line.
        problems += ["missing fact %r" % fact for fact in FACTS[name]
                     if not any(l == fact or (fact.startswith("order ") and l.startswith(fact + " "))
                                for l in lines)]
        problems += ["forbidden %r" % bad for bad in NEVER.get(name, []) if bad in text]
        print("%s %s%s" % ("FAIL" if problems else "ok  ", name, "".join("\n    " + p for p in problems)))
        failures += bool(problems)
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)
    print("%d machines, %d failed" % (len(names), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
