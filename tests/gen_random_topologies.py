#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes random but valid topology files (docs/replay-format.md), to run
the CLI on machines nobody wrote by hand: NVML nodes of 0 to 16 GPUs
(PCIe only, NVSwitch, direct NVLink meshes, links down or failing, MIG,
fabric states, P2P answers as "p2p" lists or "p2p_row"s, failing calls,
missing functions, pinned ordering variables), Level Zero nodes as a
recording shows them ("exposed") or described physically, AMD KFD trees
("files": XGMI hives and PCIe peers, links disabled or without atomics,
in tests/topologies-rocm/gen.py's kernel format), and verification
sections.  The same seed gives the same files.

usage: gen_random_topologies.py SEED COUNT OUT_DIR
"""
import importlib.util
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("kfd_gen", os.path.join(HERE, "topologies-rocm", "gen.py"))
kfd = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kfd)

P2P = ["OK", "CNS", "GNS", "TNS", "DR", "NS", "U"]
ANCESTORS = ["INTERNAL", "SINGLE", "MULTIPLE", "HOSTBRIDGE", "NODE", "SYSTEM"]
ERRORS = ["NOT_SUPPORTED", "UNKNOWN", "GPU_IS_LOST", "NO_PERMISSION", "NVML_ERROR_TIMEOUT", "INVALID_ARGUMENT"]
OPTIONAL_FUNCTIONS = ["nvmlDeviceGetGpuFabricInfoV", "nvmlDeviceGetGpuFabricInfo", "nvmlDeviceGetFieldValues",
                      "nvmlDeviceGetNvLinkRemoteDeviceType", "nvmlDeviceGetMigMode", "nvmlSystemGetConfComputeState",
                      "nvmlDeviceGetBAR1MemoryInfo", "nvmlDeviceGetVirtualizationMode", "nvmlDeviceGetMinorNumber",
                      "nvmlDeviceGetNvLinkRemotePciInfo_v2", "nvmlSystemGetCudaDriverVersion_v2"]
NAMES = ["NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA B200", "NVIDIA L40S",
         "Tesla V100-SXM2-32GB", "NVIDIA GB200"]


def uuid(r, prefix=""):
    h = "%032x" % r.getrandbits(128)
    return prefix + "-".join((h[:8], h[8:12], h[12:16], h[16:20], h[20:]))


def maybe(r, p, value, error=None):
    """value, or with probability p an error object."""
    return {"error": error or r.choice(ERRORS)} if r.random() < p else value


def bus_ids(r, n):
    buses = r.sample(range(1, 255), n)
    domain = r.choice(["0000", "00000000", "0001"])
    return ["%s:%02X:00.0" % (domain, b) if r.random() < 0.5 else "%s:%02x:00.0" % (domain, b) for b in buses]


def nvlinks(r, kind, me, n, buses):
    if kind == "pcie":
        return None
    links = []
    version = r.choice([2, 3, 4, 5, 6])
    if kind == "switch":
        count = r.choice([4, 12, 18])
        up = count if r.random() < 0.7 else r.randrange(count + 1)
        remote = {"bus_id": "FFFFFFFF:FF:FF.0"}
        if up:
            links.append({"repeat": up, "state": 1, "version": version, "remote_type": "SWITCH",
                          "remote_pci": remote, "speed_mbps": 25781})
        if count - up:
            links.append({"repeat": count - up, "state": 0, "version": version})
    else:  # a mesh: some links to each other GPU
        for peer in range(n):
            if peer == me or r.random() < 0.3:
                continue
            k = r.choice([1, 2, 4])
            entry = {"state": maybe(r, 0.05, 1 if r.random() < 0.9 else 0), "version": version,
                     "remote_type": maybe(r, 0.05, "GPU"), "remote_pci": maybe(r, 0.05, {"bus_id": buses[peer]})}
            if k > 1:
                entry["repeat"] = k
            links.append(entry)
        if r.random() < 0.2:
            links.append({"error": r.choice(ERRORS)})
    return links


def pair_answer(r, kind, linked, ancestor):
    a = {c: ("OK" if linked and r.random() < 0.9 else r.choice(P2P)) for c in ("read", "write", "nvlink", "atomics")}
    a["pci"] = r.choice(P2P)
    a["common_ancestor"] = ancestor
    for c in ("read", "write", "atomics"):
        if r.random() < 0.03:
            a[c] = {"error": r.choice(ERRORS)}
    return a


def nvml_section(r, n):
    buses = bus_ids(r, n)
    kind = r.choice(["pcie", "switch", "switch", "mesh"])
    devs = []
    for i in range(n):
        if r.random() < 0.02:
            devs.append({"error": r.choice(["GPU_IS_LOST", "UNKNOWN", "NO_PERMISSION"])})
            continue
        d = {"name": r.choice(NAMES), "uuid": uuid(r, "GPU-"),
             "pci": {"bus_id": buses[i], "pci_device_id": r.choice([0x233510DE, 0x232110DE, 0x20B210DE])},
             "cuda_compute_capability": maybe(r, 0.05, r.choice([[8, 0], [9, 0], [10, 0], [7, 0]]))}
        if r.random() < 0.7:
            d["mig_mode"] = maybe(r, 0.05, [0, 0] if r.random() < 0.85 else [1, 1])
            if d["mig_mode"] == [1, 1] and r.random() < 0.7:
                d["mig_devices"] = [{"uuid": uuid(r, "MIG-"), "gpu_instance_id": k + 1, "compute_instance_id": 0}
                                    for k in range(r.choice([1, 2, 7]))]
        if r.random() < 0.6:
            d["fabric"] = maybe(r, 0.04, {"state": r.choice([0, 1, 2, 3, 3, 3]),
                                         "status": r.choice(["SUCCESS", "SUCCESS", "NOT_SUPPORTED", "UNKNOWN"]),
                                         "cluster_uuid": uuid(r), "clique_id": r.randrange(4),
                                         "health_mask": r.choice([0, 0, 1, 0x30])})
        if r.random() < 0.5:
            d["bar1_total"] = maybe(r, 0.1, r.choice([256 << 20, 32 << 30, 128 << 30]))
        if r.random() < 0.3:
            d["virtualization_mode"] = maybe(r, 0.1, r.choice([0, 0, 1, 2, 3]))
        links = nvlinks(r, kind, i, n, buses)
        if links is not None:
            d["nvlink"] = links
        devs.append(d)
    linked = kind != "pcie"
    # A pair's common ancestor is one, whichever GPU is asked first.
    # A pair the file leaves out answers NOT_SUPPORTED, either way round.
    anc = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            anc[i][j] = anc[j][i] = maybe(r, 0.05, r.choice(ANCESTORS)) if r.random() < 0.95 else None
    sec = {"library": "libnvidia-ml.so.1", "driver_version": "580.%d.%02d" % (r.randrange(200), r.randrange(100)),
           "nvml_version": maybe(r, 0.1, "13.580.95.05"), "cuda_driver_version": maybe(r, 0.1, 13000)}
    if r.random() < 0.2:
        sec["conf_compute"] = maybe(r, 0.3, {"environment": 0, "cc_feature": r.choice([0, 1]), "devtools_mode": 0})
    if r.random() < 0.15:
        sec["missing_functions"] = r.sample(OPTIONAL_FUNCTIONS, r.randrange(1, 4))
    if r.random() < 0.05:
        sec["init"] = r.choice(["DRIVER_NOT_LOADED", {"error": "NO_PERMISSION"}, "SUCCESS"])
    if r.random() < 0.05 and n:
        sec["device_count"] = r.randrange(n + 1)
    if r.random() < 0.5:
        for i, d in enumerate(devs):
            if "uuid" in d:
                d["p2p"] = [dict(pair_answer(r, kind, linked, anc[i][j]), peer=j) for j in range(n) if anc[i][j] is not None]
    else:
        answers, keys = [], {}
        for i, d in enumerate(devs):
            if "uuid" not in d:
                continue
            row = []
            for j in range(n):
                if anc[i][j] is None:
                    row.append("-")
                    continue
                a = pair_answer(r, kind, linked, anc[i][j])
                if r.random() < 0.7 and answers:
                    a = dict(r.choice(answers), common_ancestor=anc[i][j])
                k = json.dumps(a, sort_keys=True)
                if k not in keys:
                    keys[k] = len(answers)
                    answers.append(a)
                row.append(str(keys[k]))
            folded, k = [], 0
            while k < len(row):
                run = 1
                while k + run < len(row) and row[k + run] == row[k]:
                    run += 1
                folded.append(row[k] + ("*%d" % run if run > 1 else ""))
                k += run
            d["p2p_row"] = ",".join(folded)
        if answers:
            sec["p2p_answers"] = answers
        else:
            for d in devs:
                d.pop("p2p_row", None)
    sec["devices"] = devs
    return sec, [d["pci"]["bus_id"] for d in devs if "pci" in d]


def ze_section(r):
    cards = r.randrange(1, 5)
    exposed = r.random() < 0.5
    buses = bus_ids(r, cards)
    devs, ids = [], []
    for c in range(cards):
        tiles = r.choice([0, 2]) if not exposed else r.choice([0, 2, 2])
        d = {"name": r.choice(["Intel(R) Data Center GPU Max 1550", "Intel(R) Arc(TM) A770 Graphics"]),
             "uuid": uuid(r).replace("-", ""), "device_id": r.choice([0x0bd5, 0x0bda, 0x56a0]),
             "pci": maybe(r, 0.05, {"bus_id": buses[c], "gen": r.choice([4, 5]), "width": 16},
                          r.choice(["DEVICE_LOST", "UNSUPPORTED_FEATURE"]))}
        ids.append(str(c))
        if tiles:
            d["subdevices"] = [{"uuid": uuid(r).replace("-", "")} if exposed else {} for _ in range(tiles)]
            ids += ["%d.%d" % (c, t) for t in range(tiles)]
        if r.random() < 0.05:
            d["error"] = "DEVICE_LOST"
        devs.append(d)
    edges = []
    for _ in range(r.randrange(0, 2 * cards + 1)):
        a, b = r.sample(ids, 2) if len(ids) > 1 else (None, None)
        if a is None:
            break
        e = {"a": a, "b": b, "model": r.choice(["XeLink", "XeLink", "MDFI", "XeLink-MDFI"]),
             "bandwidth": r.randrange(0, 64), "bandwidth_unit": "BYTES_PER_NANOSEC", "latency": 1,
             "latency_unit": "HOP", "duplexity": "FULL_DUPLEX"}
        if r.random() < 0.05:
            e["error"] = "DEVICE_LOST"
        edges.append(e)
    driver = {"devices": devs, "edges": edges}
    if r.random() < 0.5:
        driver["default_hierarchy"] = r.choice(["FLAT", "COMPOSITE", "COMBINED"])
    if r.random() < 0.4:
        flags = [[], ["ACCESS"], ["ACCESS", "ATOMICS"]]
        driver["p2p"] = {"same_card": r.choice(flags), "xelink": r.choice(flags), "other": r.choice(flags)}
        if r.random() < 0.5 and len(ids) > 1:
            f, t = r.sample(ids, 2)
            driver["p2p"]["pairs"] = [{"from": f, "to": t, "error": "DEVICE_LOST"} if r.random() < 0.5
                                      else {"from": f, "to": t, "flags": r.choice(flags)}]
    sec = {"library": "libze_loader.so.1", "drivers": [driver]}
    if exposed:
        sec["exposed"] = True
    if r.random() < 0.05:
        sec["init"] = {"error": r.choice(["UNINITIALIZED", "DEVICE_LOST"])}
    return sec


def kfd_files(r):
    """A KFD topology: CPUs, GPUs, XGMI links within a hive and PCIe peer
    links, each enabled or not and with or without atomics."""
    m = kfd.Machine("random", "random")
    cpus = [m.cpu(r.choice([16, 64])) for _ in range(r.choice([1, 2]))]
    gpus = []
    for k in range(r.randrange(1, 9)):
        gpus.append(m.gpu(r.choice(cpus), 0x10 + 0x10 * k, 1216, r.choice([90008, 90010, 90402, 110000]),
                          r.choice([0x738c, 0x740c, 0x74a1, 0x7448]), r.getrandbits(63) | 1, render=128 + k,
                          hive=0, kfd_name=r.choice(["arcturus", "aldebaran", "ip discovery"]), num_xcc=1))
    m.cpu_links()
    hive = r.sample(gpus, r.randrange(len(gpus) + 1))
    for a in gpus:
        m.nodes[a]["props"]["hive_id"] = 0x42 if a in hive and len(hive) > 1 else 0
        for b in gpus:
            if a == b:
                continue
            flags = r.choice([kfd.ENABLED] * 6 + [0, kfd.ENABLED | kfd.NO_ATOMICS_32,
                                                  kfd.ENABLED | kfd.NO_ATOMICS_64, kfd.ENABLED | kfd.NON_COHERENT])
            if a in hive and b in hive:
                n = r.choice([1, 1, 2, 4])
                m.link(a, b, kfd.XGMI, 15, 50000, n * 50000, flags)
            elif r.random() < 0.5:
                m.link(a, b, kfd.PCIE, 40, 312, 32000, flags | kfd.NON_COHERENT, p2p=True)
    return m.files()


def verification(r, buses):
    pairs = []
    for i in range(len(buses)):
        for j in range(len(buses)):
            if i == j or r.random() < 0.2:
                continue
            v = r.choice(["pass", "pass", "pass", "fail", "hang", "no_peer"])
            p = {"from": i, "to": j, "verified": v}
            for k in ("read", "write", "atomics_32", "atomics_64"):
                p[k + "_verified"] = "yes" if v == "pass" and r.random() < 0.95 else r.choice(["no", "not_run"])
            if v == "pass":
                p["gbps"] = "%.2f" % r.uniform(10, 400)
            pairs.append(p)
    return {"devices": buses, "pairs": pairs}


def topology(r):
    doc = {"dmaconn_topology": r.choice([1, 2, 2]), "description": "random"}
    if r.random() < 0.3:
        doc["environment"] = {"CUDA_VISIBLE_DEVICES": r.choice([None, "1,0", "0", "2,0,1", "GPU-", ""]),
                              "CUDA_DEVICE_ORDER": r.choice([None, "PCI_BUS_ID", "FASTEST_FIRST"])}
    n = r.choice([0, 1, 2, 2, 4, 4, 8, 8, 16])
    buses = []
    if r.random() < 0.9:
        doc["nvml"], buses = nvml_section(r, n)
        if r.random() < 0.03:
            doc["nvml"] = {"library": {"error": "libnvidia-ml.so.1: cannot open shared object file"}}
    if r.random() < 0.3:
        doc["pci_gpus"] = buses or bus_ids(r, r.randrange(1, 4))
    if r.random() < 0.25:
        doc["level_zero"] = ze_section(r)
    if r.random() < 0.25:
        doc["files"] = kfd_files(r)
    if buses and r.random() < 0.25:
        doc["verification"] = verification(r, buses)
    return doc


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    seed, count, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    os.makedirs(out, exist_ok=True)
    for k in range(count):
        r = random.Random("%d/%d" % (seed, k))
        with open(os.path.join(out, "random-%d-%03d.json" % (seed, k)), "w") as f:
            json.dump(topology(r), f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
