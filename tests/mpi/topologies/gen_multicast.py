#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes multicast/: GB200 NVL72 compute trays (4 GPUs, 18 NVSwitch links
each) for cuda/multicast across nodes, from tray-a.json (one tray as NVML
answers it), varying what the scenarios of multicast_mpi_test.py need:

  nvl72-trayNN       the 18 trays of rack A: cluster 5e2a9c41-..., clique
                     32766 (v4: unicast pointer clique 32766, multicast
                     pointer clique 5), IMEX channel0 open to the user
  rack2-trayNN       2 trays of rack B: the same clique ids, another cluster
  noimex-tray        a tray of rack A where no IMEX channel was created
                     (the driver registered the device: /proc/devices has it)
  denied-tray        a tray of rack A whose channel0 the user may not open
  mcsplit-tray       a tray of rack A whose multicast clique is another (6)
  idle-tray          a lone tray without IMEX at all (no module in
                     /proc/devices): nothing else to share with
  twin-a, twin-b     one tray ("twin") as two ranks of it saw it: in
                     twin-b, GPU 3's fabric registration is still in
                     progress (NVML's answer changed between the ranks)

Run it from anywhere: it writes next to itself.  The files are committed;
rerunning it must leave them unchanged.
"""
import copy
import hashlib
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RACK_A = "5e2a9c41-7b3d-4f60-a1e8-92c4d0b7f3a6"
RACK_B = "0b9d6f1e-3c58-4a27-9e40-7d1c2a86f5b3"
IMEX = "nvidia-caps-imex-channels"
CHANNEL = "/dev/%s/channel0" % IMEX


def proc_devices(imex_major):
    """/proc/devices of a GB200 tray; the IMEX line where the driver registers it."""
    chars = ["  1 mem", "  4 /dev/vc/0", "  4 tty", "  5 /dev/tty", "  5 /dev/console", "  5 /dev/ptmx",
             " 10 misc", " 13 input", "136 pts", "195 nvidia-frontend", "195 nvidia", "195 nvidiactl",
             "226 drm"]
    if imex_major is not None:
        chars.append("%d %s" % (imex_major, IMEX))
    chars += ["%d nvidia-caps" % 508, "%d nvidia-nvswitch" % 509, "%d nvidia-uvm" % 510]
    return "Character devices:\n" + "\n".join(chars) + "\n\nBlock devices:\n  7 loop\n  8 sd\n259 blkext\n"


def uuid(host, i):
    h = hashlib.sha256(("%s/%d" % (host, i)).encode()).hexdigest()
    return "GPU-%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:32])


def tray(host, what, cluster=RACK_A, multicast_clique=5, imex="ready", in_progress=()):
    with open(os.path.join(HERE, "tray-a.json")) as f:
        d = json.load(f)
    d = copy.deepcopy(d)
    d["description"] = "cuda/multicast across nodes: a GB200 NVL72 compute tray (4 GPUs, 18 NVLink5 switch " \
                       "links each), %s." % what
    d["host"] = host
    for i, dev in enumerate(d["nvml"]["devices"]):
        dev["uuid"] = uuid(host, i)
        dev["fabric"] = {"state": 3, "status": "SUCCESS", "cluster_uuid": cluster, "clique_id": 32766,
                         "health_mask": 0,
                         "cliques": [{"type": "unicast_pointer", "id": 32766},
                                     {"type": "multicast_pointer", "id": multicast_clique}]}
        if i in in_progress:
            dev["fabric"] = {"state": 2, "status": "NOT_SUPPORTED", "cluster_uuid": "00000000-0000-0000-0000-"
                             "000000000000", "clique_id": 0, "health_mask": 0, "cliques": []}
    files = {"/proc/devices": proc_devices(None if imex == "no_module" else 234)}
    if imex == "ready":
        files[CHANNEL] = "access: ok\n"
    elif imex == "denied":
        files[CHANNEL] = "access: denied (Permission denied)\n"
    d["files"] = files
    return d


def main():
    out = os.path.join(HERE, "multicast")
    os.makedirs(out, exist_ok=True)
    trays = {}
    for k in range(1, 19):
        trays["nvl72-tray%02d" % k] = tray("nvl72-tray%02d" % k, "tray %d of 18 of rack A (cluster %s, "
                                           "multicast clique 5), IMEX channel0 open to the user" % (k, RACK_A))
    for k in range(1, 3):
        trays["rack2-tray%02d" % k] = tray("rack2-tray%02d" % k, "tray %d of rack B: the same clique ids as rack A "
                                           "(32766, multicast 5), another cluster UUID (%s)" % (k, RACK_B),
                                           cluster=RACK_B)
    trays["noimex-tray"] = tray("noimex-tray", "in rack A; the driver registered %s (major 234) but no channel "
                                "was created under /dev/%s/" % (IMEX, IMEX), imex="no_channel")
    trays["denied-tray"] = tray("denied-tray", "in rack A; %s exists but the user may not open it" % CHANNEL,
                                imex="denied")
    trays["mcsplit-tray"] = tray("mcsplit-tray", "in rack A's cluster and unicast clique 32766, but multicast "
                                 "pointer clique 6 (rack A's trays: 5)", multicast_clique=6)
    trays["idle-tray"] = tray("idle-tray", "alone: /proc/devices lists no %s (the node was never set up for "
                              "IMEX), as an idle single node" % IMEX, imex="no_module")
    trays["twin-a"] = tray("twin", "as rank A of the tray saw it: every GPU registered")
    trays["twin-b"] = tray("twin", "as rank B of the same tray saw it: GPU 3's fabric registration in progress",
                           in_progress=(3,))
    for name, d in trays.items():
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(d, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
