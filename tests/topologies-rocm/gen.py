#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the AMD test bed: KFD sysfs trees as replay files (the "files"
section, tests/topologies-rocm/*.json) and as directories for
DMACONN_SYSFS_ROOT (tests/sysfs-kfd/*/).  Run from anywhere; rewrites them
(or, given a directory OUT, writes OUT/topologies-rocm and OUT/sysfs-kfd:
tests/run_rocm_cases.py checks that the committed files are its output).

The trees follow the kernel's formats (drivers/gpu/drm/amd/amdkfd/
kfd_topology.c: node_show and iolink_show print "name value" lines in this
order; kfd_crat.h: CRAT_IOLINK_FLAGS_* and CRAT_IOLINK_TYPE_*; kfd_crat.c:
XGMI io_links to every GPU of the hive, weight 15 per hop, 13/41 between
partitions; amdgpu_xgmi_get_bandwidth: min_bandwidth = one link,
max_bandwidth = links x one link, 0 for peers reached through other GPUs).
Each machine's description names its public sources.  Python 3 stdlib only.
"""

import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
SYSFS = os.path.join(os.path.dirname(HERE), "sysfs-kfd")
NODES = "/sys/class/kfd/kfd/topology/nodes"

ENABLED, NON_COHERENT, NO_ATOMICS_32, NO_ATOMICS_64 = 1, 2, 4, 8
PCIE, XGMI, HYPERTRANSPORT = 2, 11, 1

CPU_KEYS = ["cpu_cores_count", "simd_count", "mem_banks_count", "caches_count", "io_links_count",
            "p2p_links_count", "cpu_core_id_base", "simd_id_base", "max_waves_per_simd",
            "lds_size_in_kb", "gds_size_in_kb", "num_gws", "wave_front_size", "array_count",
            "simd_arrays_per_engine", "cu_per_simd_array", "simd_per_cu", "max_slots_scratch_cu",
            "gfx_target_version", "vendor_id", "device_id", "location_id", "domain",
            "drm_render_minor", "hive_id", "num_sdma_engines", "num_sdma_xgmi_engines",
            "num_sdma_queues_per_engine", "num_cp_queues"]
GPU_KEYS = ["max_engine_clk_fcompute", "local_mem_size", "fw_version", "capability", "debug_prop",
            "sdma_fw_version", "unique_id", "num_xcc"]


class Machine:
    def __init__(self, name, description):
        self.name, self.description = name, description
        self.nodes = []  # dicts: props (ordered), name, links, p2p, product

    def cpu(self, cores):
        n = {"cpu": True, "props": {"cpu_cores_count": cores, "cpu_core_id_base": 0,
                                    "max_engine_clk_ccompute": 3700},
             "links": [], "p2p": [], "name": ""}
        self.nodes.append(n)
        return len(self.nodes) - 1

    def gpu(self, cpu, bus, simd, gfx, device, unique_id, hive=0, render=128, kfd_name="",
            domain=0, location_extra=0, num_xcc=8, product=None):
        n = {"cpu": False, "host": cpu, "name": kfd_name, "links": [], "p2p": [], "product": product,
             "props": {"cpu_cores_count": 0, "simd_count": simd, "simd_id_base": 2147487744,
                       "max_waves_per_simd": 8, "lds_size_in_kb": 64, "wave_front_size": 64,
                       "simd_per_cu": 4 if gfx < 100000 else 2, "max_slots_scratch_cu": 32,
                       "gfx_target_version": gfx, "vendor_id": 0x1002, "device_id": device,
                       "location_id": (bus << 8) | location_extra, "domain": domain,
                       "drm_render_minor": render, "hive_id": hive, "num_sdma_engines": 2,
                       "num_sdma_xgmi_engines": 6 if hive else 0, "num_sdma_queues_per_engine": 8,
                       "num_cp_queues": 24, "max_engine_clk_fcompute": 2100, "local_mem_size": 0,
                       "fw_version": 151, "capability": 746094208, "debug_prop": 1495,
                       "sdma_fw_version": 19, "unique_id": unique_id, "num_xcc": num_xcc,
                       "max_engine_clk_ccompute": 3700}}
        self.nodes.append(n)
        g = len(self.nodes) - 1
        # The GPU's first io_link goes to its CPU (PCIe, weight 20); the kernel
        # adds the CPU's inbound link, non-coherent (kfd_set_iolink_non_coherent).
        self.link(g, cpu, PCIE, 20, 312, 64000, ENABLED)
        self.link(cpu, g, PCIE, 20, 312, 64000, ENABLED | NON_COHERENT)
        return g

    def link(self, a, b, type_, weight, min_bw, max_bw, flags, p2p=False):
        (self.nodes[a]["p2p" if p2p else "links"]).append(
            {"type": type_, "to": b, "weight": weight, "min": min_bw, "max": max_bw, "flags": flags})

    def files(self):
        out = {}
        cpus = [i for i, n in enumerate(self.nodes) if n["cpu"]]
        for i, n in enumerate(self.nodes):
            base = "%s/%d" % (NODES, i)
            p = dict(n["props"])
            p["io_links_count"], p["p2p_links_count"] = len(n["links"]), len(n["p2p"])
            keys = CPU_KEYS + (GPU_KEYS if not n["cpu"] else []) + ["max_engine_clk_ccompute"]
            out[base + "/properties"] = "".join("%s %d\n" % (k, p.get(k, 0)) for k in keys)
            out[base + "/name"] = n["name"] + "\n"
            for kind in ("links", "p2p"):
                for k, l in enumerate(n[kind]):
                    d = "io_links" if kind == "links" else "p2p_links"
                    out["%s/%s/%d/properties" % (base, d, k)] = (
                        "type %d\nversion_major 0\nversion_minor 0\nnode_from %d\nnode_to %d\n"
                        "weight %d\nmin_latency 0\nmax_latency 0\nmin_bandwidth %d\n"
                        "max_bandwidth %d\nrecommended_transfer_size 0\n"
                        "recommended_sdma_engine_id_mask 0\nflags %d\n"
                        % (l["type"], i, l["to"], l["weight"], l["min"], l["max"], l["flags"]))
            if n.get("product"):
                out["/sys/class/drm/renderD%d/device/product_name" % p["drm_render_minor"]] = \
                    n["product"] + "\n"
        del cpus
        return out

    def cpu_links(self):
        """CPU <-> CPU links (HyperTransport type on AMD hosts, NUMA distance weight)
        and each GPU's indirect links to the CPUs it is not attached to."""
        cpus = [i for i, n in enumerate(self.nodes) if n["cpu"]]
        for a in cpus:
            for b in cpus:
                if a != b:
                    self.link(a, b, HYPERTRANSPORT, 32, 0, 0, ENABLED)
        for g, n in enumerate(self.nodes):
            if n["cpu"]:
                continue
            for c in cpus:
                if c != n["host"]:
                    self.link(g, c, PCIE, 20 + 32, 312, 64000, ENABLED, p2p=True)


def xgmi_hive(m, gpus, per_link, links_between, hops_between):
    """XGMI io_links between every two GPUs of a hive (kfd_crat.c)."""
    for a in gpus:
        for b in gpus:
            if a == b:
                continue
            hops = hops_between(a, b)
            n = links_between(a, b)
            if per_link is None:      # before MI200: no bandwidth reported
                m.link(a, b, XGMI, 15 * hops, 0, 0, ENABLED)
            else:
                m.link(a, b, XGMI, 15 * hops, per_link, n * per_link, ENABLED)


def write(m):
    os.makedirs(HERE, exist_ok=True)
    files = m.files()
    doc = {"dmaconn_topology": 1, "description": m.description, "files": files}
    with open(os.path.join(HERE, m.name + ".json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    return files


def write_dir(name, files, description):
    root = os.path.join(SYSFS, name)
    if os.path.isdir(root):
        shutil.rmtree(root)
    for path, data in files.items():
        full = root + path
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(data)
    with open(os.path.join(root, "README"), "w") as f:
        f.write(description + "\n")


# ------------------------------------------------------------------ machines

def mi300x_package(m, sockets, k, simd, **extra):
    """A GPU node of package k of eight MI300X, four on each socket."""
    buses = [0x05, 0x26, 0x46, 0x65, 0x85, 0xa5, 0xc6, 0xe5]
    return m.gpu(sockets[k // 4], buses[k], simd, 90402, 0x74a1, 0x6b1c2f3e4d5a6970 + k * 0x1111,
                 hive=0x6a8b4c2d1e0f9a7b, kfd_name="ip discovery", **extra)


def mi300x_8():
    m = Machine("mi300x-8", (
        "8x AMD Instinct MI300X (gfx942, device 0x74a1, 304 CUs) on a 2-socket host, in SPX mode: "
        "every GPU joined to each of the 7 others by one XGMI link (AMD Instinct MI300X data sheet and "
        "ROCm 'MI300 microarchitecture': 7 Infinity Fabric links of 128 GB/s bidirectional, fully "
        "connected 8-GPU platform). The kernel reports one link per peer as min = max = 64000 MB/s "
        "(16 lanes x 32 Gb/s, amdgpu_xgmi_get_bandwidth), weight 15. PCI addresses and unique ids are "
        "illustrative; the board FRU product name is given for the first GPU only."))
    sockets = m.cpu(96), m.cpu(96)
    gpus = [mi300x_package(m, sockets, i, 1216, render=128 + 8 * i,
                           product="AMD Instinct MI300X" if i == 0 else None) for i in range(8)]
    xgmi_hive(m, gpus, 64000, lambda a, b: 1, lambda a, b: 1)
    m.cpu_links()
    return m


# GCD pairs of the 4 MI250X of one node: quad links within a package, dual
# and single links between packages.
MI250X_QUAD = [(0, 1), (2, 3), (4, 5), (6, 7)]
MI250X_DUAL = [(0, 6), (1, 7), (2, 4), (3, 5)]
MI250X_SINGLE = [(0, 2), (1, 5), (3, 7), (4, 6)]


def mi250x_8():
    m = Machine("mi250x-8", (
        "4x AMD Instinct MI250X = 8 GCDs (gfx90a, device 0x740c, 110 CUs each) of one node, as in an "
        "HPE Cray EX235a (OLCF Frontier user guide, 'Node architecture'): the two GCDs of a package "
        "are joined by 4 Infinity Fabric links (200+200 GB/s), GCDs of different packages by 2 (100+100) "
        "or 1 (50+50); one link is 16 lanes x 25 Gb/s = 50000 MB/s (amdgpu_xgmi_get_bandwidth, AMD CDNA2 "
        "white paper). GCD 0 reaches GCDs 1, 2 and 6 directly and the rest in 2 hops, as a public "
        "'rocm-smi --showtopo' of such a node shows (weights 15/30, openmm/openmm#3940); which external "
        "pairs carry 2 links and which 1 is this fixture's choice (dual 0-6 1-7 2-4 3-5, single 0-2 "
        "1-5 3-7 4-6). Host links are modelled as PCIe; addresses and unique ids are illustrative."))
    c0 = m.cpu(64)
    buses = [0xc1, 0xc6, 0xc9, 0xce, 0xd1, 0xd6, 0xd9, 0xde]
    gpus = [m.gpu(c0, bus, 440, 90010, 0x740c, 0x2c3d4e5f60718293 + i * 0x101, hive=0x1f2e3d4c5b6a7988,
                  render=128 + i, kfd_name="aldebaran", num_xcc=1) for i, bus in enumerate(buses)]
    n = {}
    for pairs, count in ((MI250X_QUAD, 4), (MI250X_DUAL, 2), (MI250X_SINGLE, 1)):
        for a, b in pairs:
            n[(a, b)] = n[(b, a)] = count
    # hops: breadth-first over the direct links
    dist = {}
    for s in range(8):
        d, frontier = {s: 0}, [s]
        while frontier:
            nxt = []
            for u in frontier:
                for v in range(8):
                    if (u, v) in n and v not in d:
                        d[v] = d[u] + 1
                        nxt.append(v)
            frontier = nxt
        for t, h in d.items():
            dist[(s, t)] = h
    idx = {g: i for i, g in enumerate(gpus)}
    xgmi_hive(m, gpus, 50000, lambda a, b: n.get((idx[a], idx[b]), 0),
              lambda a, b: dist[(idx[a], idx[b])])
    m.cpu_links()
    return m


def mi100_4():
    m = Machine("mi100-4", (
        "4x AMD Instinct MI100 (gfx908, device 0x738c, 120 CUs) in one XGMI hive, fully connected: "
        "each MI100 has 3 Infinity Fabric links (AMD Instinct MI100 data sheet: 3 links, up to 276 GB/s "
        "peer bandwidth), one to each of the 3 others in a 4-GPU hive. Kernels report no XGMI "
        "bandwidth for GPUs before MI200 (amdgpu_amdkfd_get_xgmi_bandwidth_mbytes returns 0 below "
        "GC 9.4.2), so each direct link (weight 15) counts as one. Addresses and unique ids are "
        "illustrative."))
    c0 = m.cpu(64)
    gpus = [m.gpu(c0, bus, 480, 90008, 0x738c, 0x4a5b6c7d8e9fa0b1 + i, hive=0x5e6f708192a3b4c5,
                  render=128 + i, kfd_name="arcturus", num_xcc=1)
            for i, bus in enumerate([0x03, 0x23, 0x43, 0x63])]
    xgmi_hive(m, gpus, None, lambda a, b: 1, lambda a, b: 1)
    m.cpu_links()
    return m


def radeon_pcie_4():
    m = Machine("radeon-pcie-4", (
        "4x AMD Radeon PRO W7900 (gfx1100, device 0x7448, 96 CUs) on PCIe only, large BAR, kernel "
        "built with CONFIG_HSA_AMD_P2P: no XGMI, so the infinity_fabric matrix is 0; the kernel lists "
        "each peer as a p2p_link (kfd_add_peer_prop: type PCIe, weight = the two PCIe hops 20 + 20, "
        "flags ENABLED | NON_COHERENT). GPU 3 sits where PCIe AtomicOps are not routed, so the kernel "
        "flags its links NO_ATOMICS_32 | NO_ATOMICS_64 (kfd_set_iolink_no_atomics) and it has no "
        "peer DMA with atomics. Addresses and unique ids are illustrative."))
    c0 = m.cpu(32)
    gpus = [m.gpu(c0, bus, 192, 110000, 0x7448, 0x71829a3b4c5d6e7f + i, render=128 + i,
                  kfd_name="ip discovery", num_xcc=1) for i, bus in enumerate([0x03, 0x43, 0x83, 0xc3])]
    atomics_off = NO_ATOMICS_32 | NO_ATOMICS_64
    for a in gpus:
        for b in gpus:
            if a != b:
                flags = ENABLED | NON_COHERENT | (atomics_off if gpus[3] in (a, b) else 0)
                m.link(a, b, PCIE, 40, 312, 32000, flags, p2p=True)
    m.cpu_links()
    return m


def mi300x_cpx():
    m = Machine("mi300x-cpx", (
        "8x AMD Instinct MI300X in CPX compute partitioning: each package shows as 8 KFD nodes of 38 "
        "CUs (ROCm 'GPU partitioning' docs: CPX = one partition per XCD, 8 per MI300X), 64 GPUs. "
        "Partitions of one package share unique_id and PCI device; the kernel ORs the partition index "
        "into location_id (kfd_topology_add_device) and, with no per-peer link data in partition "
        "mode, gives XGMI io_links weight 13 within a package (memory bandwidth 819200 MB/s as both "
        "bounds) and 41 between packages (bandwidth 0) (kfd_fill_gpu_xgmi_link_to_gpu). Addresses "
        "and unique ids are illustrative."))
    sockets = m.cpu(96), m.cpu(96)
    gpus, pkg = [], {}
    for k in range(8):
        for p in range(8):
            g = mi300x_package(m, sockets, k, 152, render=128 + 8 * k + p, location_extra=p, num_xcc=1)
            gpus.append(g)
            pkg[g] = k
    for a in gpus:
        for b in gpus:
            if a != b:
                if pkg[a] == pkg[b]:
                    m.link(a, b, XGMI, 13, 819200, 819200, ENABLED)
                else:
                    m.link(a, b, XGMI, 41, 0, 0, ENABLED)
    m.cpu_links()
    return m


def mi300x_dpx_dir():
    """One MI300X in DPX (2 partitions), partition index in location_id bits 28-31
    (the variant some kernels use), as a directory."""
    m = Machine("mi300x-dpx", (
        "1x AMD Instinct MI300X in DPX mode (2 partitions of 152 CUs): both KFD nodes share "
        "unique_id and PCI device 0000:05:00.0; this kernel variant puts the partition index in "
        "location_id bits 28-31 (RCCL's alt_rsmi reads it there). Within the package the XGMI io_link "
        "has weight 13. Illustrative addresses."))
    c0 = m.cpu(96)
    g0 = m.gpu(c0, 0x05, 608, 90402, 0x74a1, 0x0123456789abcdef, hive=0x77, render=128,
               kfd_name="ip discovery", num_xcc=4)
    g1 = m.gpu(c0, 0x05, 608, 90402, 0x74a1, 0x0123456789abcdef, hive=0x77, render=129,
               kfd_name="ip discovery", num_xcc=4)
    m.nodes[g1]["props"]["location_id"] |= 1 << 28
    m.link(g0, g1, XGMI, 13, 819200, 819200, ENABLED)
    m.link(g1, g0, XGMI, 13, 819200, 819200, ENABLED)
    return m


def small_pair(name, description):
    m = Machine(name, description)
    c0 = m.cpu(16)
    g0 = m.gpu(c0, 0x03, 480, 90008, 0x738c, 0x1111111111111111, hive=0x42, kfd_name="arcturus", num_xcc=1)
    g1 = m.gpu(c0, 0x23, 480, 90008, 0x738c, 0x2222222222222222, hive=0x42, render=129,
               kfd_name="arcturus", num_xcc=1)
    return m, g0, g1


def main():
    for build in (mi300x_8, mi250x_8, mi100_4, radeon_pcie_4, mi300x_cpx):
        write(build())
    # Directories for DMACONN_SYSFS_ROOT.
    m = mi100_4()
    write_dir("mi100-4", m.files(), m.description)
    m = mi300x_dpx_dir()
    write_dir("mi300x-dpx", m.files(), m.description)

    m, g0, g1 = small_pair("disabled-link", "Two MI100s whose XGMI io_links lack the ENABLED flag.")
    m.link(g0, g1, XGMI, 15, 0, 0, 0)
    m.link(g1, g0, XGMI, 15, 0, 0, 0)
    write_dir(m.name, m.files(), m.description)

    m, g0, g1 = small_pair("broken-link", "Two MI100s; an io_link of node 2 lacks node_to.")
    m.link(g0, g1, XGMI, 15, 0, 0, ENABLED)
    m.link(g1, g0, XGMI, 15, 0, 0, ENABLED)
    f = m.files()
    key = NODES + "/1/io_links/1/properties"
    f[key] = "".join(l + "\n" for l in f[key].splitlines() if not l.startswith("node_to"))
    write_dir(m.name, f, m.description)

    m, g0, g1 = small_pair("malformed", "Two MI100s; node 2's properties have a garbled line.")
    m.link(g0, g1, XGMI, 15, 0, 0, ENABLED)
    m.link(g1, g0, XGMI, 15, 0, 0, ENABLED)
    f = m.files()
    f[NODES + "/2/properties"] = f[NODES + "/2/properties"].replace("device_id 29580", "device_id 0x738c")
    write_dir(m.name, f, m.description)

    m, g0, g1 = small_pair("hidden-node", (
        "Two MI100s and a third GPU node whose properties read empty, as for a GPU outside the "
        "process's device cgroup (libhsakmt then skips the node): HIP sees 2 GPUs."))
    m.link(g0, g1, XGMI, 15, 0, 0, ENABLED)
    m.link(g1, g0, XGMI, 15, 0, 0, ENABLED)
    g2 = m.gpu(0, 0x43, 480, 90008, 0x738c, 0x3333333333333333, hive=0x42, render=130,
               kfd_name="arcturus", num_xcc=1)
    m.link(g0, g2, XGMI, 15, 0, 0, ENABLED)
    f = m.files()
    f[NODES + "/%d/properties" % g2] = ""
    write_dir(m.name, f, m.description)


if __name__ == "__main__":
    import sys
    if len(sys.argv) > 1:
        HERE = os.path.join(sys.argv[1], "topologies-rocm")
        SYSFS = os.path.join(sys.argv[1], "sysfs-kfd")
    main()
