#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the machines of tests/topologies-multicast/: one multicast verdict each.

Each machine starts from a hand-written node of tests/topologies/ or
examples/ (the HGX H100 8-GPU baseboard, the GB200 NVL72 tray) and changes
only what NVML answers differently on the machine it stands for: the fabric
registration (state, status, cluster UUID, cliques, health mask), MIG mode,
confidential computing, NVLink remotes, the driver version.  Health masks
are NVML's 2- and 4-bit fields: 0x1aa is every field healthy (bandwidth not
degraded, no route recovery, route healthy, no access timeout recovery,
correct configuration); 0x19a the same with the route unhealthy.
Run it from anywhere; it rewrites the .json files beside it.
"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
HEALTHY, ROUTE_UNHEALTHY = 0x1AA, 0x19A
CLUSTER = "9c6f5af3-53bf-49b5-a436-b66766c413c3"


def load(path):
    with open(os.path.join(REPO, path)) as f:
        return json.load(f)


def hgx(description):
    node = load("tests/topologies/hgx-h100-8.json")
    node["description"] = description
    return node


def tray(description):
    node = load("examples/gb200-nvl72-tray.json")
    node["description"] = description
    return node


def fabric(node, gpus=None, **kv):
    for i, d in enumerate(node["nvml"]["devices"]):
        if gpus is None or i in gpus:
            d["fabric"].update(kv)
    return node


def machines():
    out = {}
    out["hgx-h100-healthy"] = hgx(
        "HGX H100 8-GPU (tests/topologies/hgx-h100-8.json) as a standalone node reports it: fabric "
        "COMPLETED/SUCCESS with an all-zero cluster UUID and clique 0 (a single-node NVSwitch domain; "
        "only multi-node NVLink assigns them), v3 health all healthy. Every pair can join one multicast object.")
    fabric(out["hgx-h100-healthy"], health_mask=HEALTHY, health_summary=1)

    out["fm-not-started"] = hgx(
        "HGX H100 8-GPU with nvidia-fabricmanager not running: every GPU's fabric state NOT_STARTED (1), "
        "status SUCCESS, zero cluster UUID and clique; the NVLinks to the NVSwitches are trained.")
    fabric(out["fm-not-started"], state=1)

    out["insufficient-resources"] = hgx(
        "HGX H100 8-GPU where GPU 3's registration COMPLETED with INSUFFICIENT_RESOURCES (as "
        "Azure/azhpc-images#506 shows it: clique 0, zero cluster UUID); the others succeeded.")
    fabric(out["insufficient-resources"], gpus={3}, status="INSUFFICIENT_RESOURCES")

    node = hgx("4x H200 NVL (compute capability 9.0) joined in pairs by NVLink bridges (GPU 0-1 and 2-3, "
               "18 links each, remote type GPU), no NVSwitch: NVML's fabric state NOT_SUPPORTED (0), as on "
               "PCIe products. NVLink carries peer traffic within each pair; no multicast anywhere.")
    node["pci_gpus"] = node["pci_gpus"][:4]
    devs = node["nvml"]["devices"][:4]
    for i, d in enumerate(devs):
        d["name"] = "NVIDIA H200 NVL"
        d["fabric"] = {"state": 0, "status": "SUCCESS", "cluster_uuid": "00000000-0000-0000-0000-000000000000",
                       "clique_id": 0}
        peer = devs[i ^ 1]["pci"]["bus_id"]
        d["nvlink"] = [{"repeat": 18, "state": 1, "version": 6, "remote_type": "GPU", "remote_pci": {"bus_id": peer}}]
        d["p2p"] = [p for p in d["p2p"] if p["peer"] < 4]
        for p in d["p2p"]:
            if p["peer"] not in (i, i ^ 1):
                p["nvlink"] = "NS"
    node["nvml"]["devices"] = devs
    out["h200-nvl-bridged"] = node

    out["confidential-computing"] = hgx(
        "HGX H100 8-GPU in protected PCIe mode (one confidential VM, GPUs and NVSwitches passed through): "
        "nvmlSystemGetConfComputeState ccFeature 1 (enabled), devtools off; peer access answers OK "
        "(sglang#30364: P2P works, multicast does not).")
    out["confidential-computing"]["nvml"]["conf_compute"] = {"environment": 2, "cc_feature": 1, "devtools_mode": 0}

    node = load("examples/pcie-only.json")
    node["description"] = ("4x H100 PCIe (compute capability 9.0) without NVLink bridges, on the PCIe tree of "
                           "examples/pcie-only.json: NVML's fabric state NOT_SUPPORTED (0), every NVLink query "
                           "NOT_SUPPORTED, peer access over PCIe as that example answers it.")
    for d in node["nvml"]["devices"]:
        d["name"] = "NVIDIA H100 PCIe"
        d["cuda_compute_capability"] = [9, 0]
        d["fabric"] = {"state": 0, "status": "SUCCESS", "cluster_uuid": "00000000-0000-0000-0000-000000000000",
                       "clique_id": 0}
    out["pcie-only"] = node

    out["fabric-in-progress"] = hgx(
        "HGX H100 8-GPU right after boot: GPU 1's registration still IN_PROGRESS (2), the others COMPLETED.")
    fabric(out["fabric-in-progress"], gpus={1}, state=2)

    out["route-unhealthy"] = hgx(
        "HGX H100 8-GPU whose GPU 5 reports a route-unhealthy fabric health mask (0x19a: route unhealthy, the "
        "other fields healthy; summary UNHEALTHY); the others 0x1aa.")
    fabric(out["route-unhealthy"], health_mask=HEALTHY, health_summary=1)
    fabric(out["route-unhealthy"], gpus={5}, health_mask=ROUTE_UNHEALTHY, health_summary=2)

    out["two-cliques"] = hgx(
        "HGX H100 8-GPU partitioned by the fabric manager into two cliques of one cluster: GPUs 0-3 clique 1, "
        "GPUs 4-7 clique 2.")
    fabric(out["two-cliques"], cluster_uuid=CLUSTER, clique_id=1)
    fabric(out["two-cliques"], gpus={4, 5, 6, 7}, clique_id=2)

    out["mig"] = hgx("HGX H100 8-GPU with GPU 2 in MIG mode (no instance created).")
    out["mig"]["nvml"]["devices"][2]["mig_mode"] = [1, 1]
    out["mig"]["nvml"]["devices"][2]["mig_devices"] = []

    node = tray("GB200 NVL72 compute tray (examples/gb200-nvl72-tray.json) answering nvmlDeviceGetGpuFabricInfo_v4: "
                "every GPU in unicast pointer clique 32766 (the legacy clique_id), but the multicast cliques split "
                "the tray: GPUs 0-1 multicast pointer clique 7, GPUs 2-3 clique 8 (logical-endpoint cliques "
                "alongside, as Blackwell reports them).")
    for i, d in enumerate(node["nvml"]["devices"]):
        mc = 7 if i < 2 else 8
        d["fabric"].update(health_mask=HEALTHY, health_summary=1, cliques=[
            {"type": "unicast_pointer", "id": 32766}, {"type": "multicast_pointer", "id": mc},
            {"type": "unicast_logical_endpoint", "id": 40}, {"type": "multicast_logical_endpoint", "id": 50 + mc}])
    out["gb200-v4-multicast-cliques"] = node

    node = tray("GB200 NVL72 compute tray answering v4 with one multicast clique for the whole tray (multicast "
                "pointer clique 9, unicast pointer 32766): every pair can join one multicast object.")
    for d in node["nvml"]["devices"]:
        d["fabric"].update(health_mask=HEALTHY, health_summary=1, cliques=[
            {"type": "unicast_pointer", "id": 32766}, {"type": "multicast_pointer", "id": 9}])
    out["gb200-v4-healthy"] = node

    node = tray("GB200 NVL72 compute tray whose fabric registration COMPLETED with status SUCCESS but an "
                "all-zero cluster UUID and clique 0 (the tray is in no multi-node domain): within the node the "
                "four GPUs share that standalone domain, as an HGX baseboard does.")
    fabric(node, cluster_uuid="00000000-0000-0000-0000-000000000000", clique_id=0)
    out["zero-cluster-uuid"] = node

    out["old-driver"] = hgx(
        "HGX H100 8-GPU on driver 525.85.12 (CUDA 12.0): NVML has only the legacy nvmlDeviceGetGpuFabricInfo; "
        "CUDA's multicast objects came with R530 (CUDA 12.1).")
    out["old-driver"]["nvml"].update(driver_version="525.85.12", nvml_version="12.525.85.12", cuda_driver_version=12000,
                                     missing_functions=["nvmlDeviceGetGpuFabricInfoV",
                                                                        "nvmlDeviceGetGpuFabricInfo_v4"])
    return out


def main():
    for name, node in machines().items():
        with open(os.path.join(HERE, name + ".json"), "w") as f:
            json.dump(node, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
