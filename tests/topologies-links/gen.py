#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the machines of tests/topologies-links/: GPUs behind NVSwitches
with links down, links NVML does not support, and GPUs of two generations on
one node (hand-made; the link counts of NVLink 4 (18) and NVLink 6 (36)).
Run it from anywhere; it rewrites the .json files beside it.
"""
import json
import os

OUT = os.path.dirname(os.path.abspath(__file__))
BUS = ["0000:%02x:00.0" % b for b in (0x1b, 0x43, 0x52, 0x61, 0x9d, 0xc3, 0xd1, 0xdf)]

def link(state, version, remote=None, peer=None, err=None):
    if err: return {"error": err}
    d = {"state": state, "version": version}
    if state == 1:
        if remote == "SWITCH":
            d.update(remote_type="SWITCH", remote_pci={"bus_id": "FFFFFFFF:FF:FF.0"})
        else:
            d.update(remote_type="GPU", remote_pci={"bus_id": "0000" + peer})
    return d

def switch_gpu(i, n, name, links, version, down=(), absent=(), errors=None, cc=(9, 0), mig=None, extra=None, fabric=True):
    nv = []
    errors = errors or {}
    for l in range(links):
        if l in errors: nv.append({"error": errors[l]})
        elif l in absent: nv.append({"error": "NOT_SUPPORTED"})
        elif l in down: nv.append(link(0, version))
        else: nv.append(link(1, version, "SWITCH"))
    d = {"name": name, "uuid": "GPU-%08x-0000-4000-8000-%012d" % (0xabc00000 + i, i),
         "pci": {"bus_id": "0000" + BUS[i]}, "cuda_compute_capability": list(cc),
         "mig_mode": mig or [0, 0], "nvlink": nv,
         "p2p": [{"peer": j, "read": "OK", "write": "OK", "nvlink": "OK", "atomics": "OK", "pci": "NS",
                  "common_ancestor": "SYSTEM"} for j in range(n) if j != i]}
    if fabric:
        d["fabric"] = {"state": 3, "status": "SUCCESS", "cluster_uuid": "36a1e000-0000-4000-8000-00000000c1a5",
                       "clique_id": 1, "health_mask": 0}
    d.update(extra or {})
    return d

def write(name, desc, devs):
    doc = {"dmaconn_topology": 1, "description": desc, "pci_gpus": [d["pci"]["bus_id"][4:] for d in devs],
           "nvml": {"driver_version": "590.10", "cuda_driver_version": 13050, "devices": devs}}
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(doc, f, indent=1); f.write("\n")

H100 = "NVIDIA H100 80GB HBM3"
SIXTH = "NVIDIA NVLink6 Stand-in"
write("links24", "4 GPUs of 24 NVLinks (a stand-in) behind NVSwitches; GPU 1's links 3 and 20 are down",
      [switch_gpu(i, 4, "NVIDIA NVLink24 Stand-in", 24, 7, down={1: (3, 20)}.get(i, ())) for i in range(4)])
write("links36-edges", "4 GPUs of 36 NVLinks behind NVSwitches; GPU 3's first and last links (0 and 35) are down",
      [switch_gpu(i, 4, SIXTH, 36, 8, down={3: (0, 35)}.get(i, ())) for i in range(4)])
write("links36-not-supported", "4 GPUs of 36 NVLinks behind NVSwitches; NVML answers NOT_SUPPORTED for links 4 "
      "and 5 of every GPU (neither active nor down); GPU 2's link 35 is down",
      [switch_gpu(i, 4, SIXTH, 36, 8, absent=(4, 5), down={2: (35,)}.get(i, ())) for i in range(4)])
write("mixed-generations", "Two H100 (18 NVLinks) and two NVLink 6 GPUs (36) behind one fabric; GPU 1 (H100) "
      "lost link 2, GPU 3 (NVLink 6) lost link 7: a pair of an H100 and GPU 3 has the H100's 18 either way",
      [switch_gpu(i, 4, H100 if i < 2 else SIXTH, 18 if i < 2 else 36, 4 if i < 2 else 8,
                  down={3: (7,), 1: (2,)}.get(i, ())) for i in range(4)])
write("hgx-three-lost", "HGX H100 8-GPU: GPU 1 lost links 5 and 11, GPU 4 links 0-3 and 9, GPU 6 all 18",
      [switch_gpu(i, 8, H100, 18, 4, down={1: (5, 11), 4: (0, 1, 2, 3, 9), 6: tuple(range(18))}.get(i, ()))
       for i in range(8)])

# The bridged H100 NVL board of ../topologies-reasons (bridge 2-3 lost link
# 4), with the bridge 0-1 losing link 2 as well: each unbridged pair is 0
# between two GPUs that lost a link, neither of which joined them.
with open(os.path.join(OUT, "..", "topologies-reasons", "nvlink-down-bridged.json")) as f:
    doc = json.load(f)
for d in doc["nvml"]["devices"][:2]:
    d["nvlink"][2] = {"state": 0, "version": 4}
doc["description"] = ("4x NVIDIA H100 NVL, NVLink bridges joining GPUs 0-1 and 2-3 (12 links each, links 12-17 "
                      "spare); link 2 of the bridge 0-1 and link 4 of the bridge 2-3 are down at both ends")
with open(os.path.join(OUT, "bridged-both-down.json"), "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
