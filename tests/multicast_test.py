#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""cuda/multicast on the machines of tests/topologies-multicast/ (gen.py).

Per machine: the whole matrix (1 exactly where both GPUs are capable and share
a multicast domain), each GPU's multicast_supported and multicast_reason, and
every zero pair's reason code (the cause of GPU i, else of GPU j, else
different_clique), plus the words a reason must name.  Then v4 through a
recording: --record of a v4 machine keeps the typed cliques, and its replay
gives the same result.
Usage: multicast_test.py BUILD_DIR WORK_DIR   (run from the source root)
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOPO = os.path.join(HERE, "topologies-multicast")
ALL = None  # every GPU

# name: (GPUs, multicast domains of the capable GPUs, {GPU or ALL: cause}, words a reason names)
CASES = {
    "hgx-h100-healthy": (8, [range(8)], {}, []),
    "fm-not-started": (8, [], {ALL: "fabric_not_started"}, ["is the fabric manager running?"]),
    "insufficient-resources": (8, [[0, 1, 2, 4, 5, 6, 7]], {3: "fabric_failed"}, ["NVML_ERROR_INSUFFICIENT_RESOURCES"]),
    "h200-nvl-bridged": (4, [], {ALL: "no_nvswitch"}, ["not attached to an NVSwitch"]),
    "confidential-computing": (8, [], {ALL: "confidential_computing"}, ["confidential computing is on"]),
    "pcie-only": (4, [], {ALL: "no_nvswitch"}, ["fabric not supported"]),
    "fabric-in-progress": (8, [[0, 2, 3, 4, 5, 6, 7]], {1: "fabric_in_progress"}, ["still in progress"]),
    "route-unhealthy": (8, [[0, 1, 2, 3, 4, 6, 7]], {5: "fabric_unhealthy"}, ["route unhealthy", "0x19a"]),
    "two-cliques": (8, [range(4), range(4, 8)], {}, ["clique 1", "clique 2"]),
    "mig": (8, [[0, 1, 3, 4, 5, 6, 7]], {2: "mig_enabled"}, ["MIG mode"]),
    "gb200-v4-multicast-cliques": (4, [[0, 1], [2, 3]], {}, ["clique 7", "clique 8"]),
    "gb200-v4-healthy": (4, [range(4)], {}, []),
    "zero-cluster-uuid": (4, [range(4)], {}, []),
    "old-driver": (8, [], {ALL: "driver_without_multicast"}, ["525.85.12", "R530"]),
}

# Device properties a machine must show (GPU 0's, as the JSON types them).
DEVICE = {
    "hgx-h100-healthy": {"fabric_info_version": "v3", "multicast_clique_id": 0, "clique_id": 0},
    "gb200-v4-multicast-cliques": {
        "fabric_info_version": "v4", "clique_id": 32766, "multicast_clique_id": 7,
        "fabric_cliques": [{"type": "unicast_pointer", "id": 32766}, {"type": "multicast_pointer", "id": 7},
                           {"type": "unicast_logical_endpoint", "id": 40},
                           {"type": "multicast_logical_endpoint", "id": 57}]},
    "gb200-v4-healthy": {"fabric_info_version": "v4", "multicast_clique_id": 9, "clique_id": 32766},
    "old-driver": {"fabric_info_version": "v1"},
}

problems = []


def run(cli, args, env=None):
    e = dict(os.environ, DMACONN_QUIET="1")
    for k in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "DMACONN_REPLAY"):
        e.pop(k, None)
    e.update(env or {})
    try:
        p = subprocess.run(cli + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, timeout=120)
    except subprocess.TimeoutExpired:
        problems.append("%s: still running after 120 s" % " ".join(args))
        return None
    if p.returncode != 0:
        problems.append("%s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.decode()[-300:]))
        return None
    return json.loads(p.stdout)


def result(cli, path, conn="multicast"):
    doc = run(cli, ["--replay", path, "-d", "cuda", "-c", conn, "--json", "-q"])
    return doc["results"][0] if doc else None


def check_case(cli, name, n, domains, causes, words):
    r = result(cli, os.path.join(TOPO, name + ".json"))
    if r is None:
        return
    cause = {d: causes.get(d, causes.get(ALL)) for d in range(n)}
    group = {d: k for k, g in enumerate(domains) for d in g}
    want = [[int(i != j and not cause[i] and not cause[j] and group.get(i, -1) == group.get(j, -2))
             for j in range(n)] for i in range(n)]
    if r["matrix"] != want:
        problems.append("%s: matrix %s, expected %s" % (name, r["matrix"], want))
    for d, dev in enumerate(r["devices"]):
        supported = dev.get("multicast_supported")
        if supported != (0 if cause[d] else 1) or dev.get("multicast_reason") != cause[d]:
            problems.append("%s: GPU %d multicast_supported %r reason %r, expected %r %r"
                            % (name, d, supported, dev.get("multicast_reason"), 0 if cause[d] else 1, cause[d]))
    pairs = {(p["from"], p["to"]): p for p in r["pairs"]}
    texts = set()
    for i in range(n):
        for j in range(n):
            if i == j or want[i][j]:
                if (i, j) in pairs and "reason" in pairs[(i, j)]:
                    problems.append("%s: pair %d -> %d is 1 (or the diagonal) but has a reason" % (name, i, j))
                continue
            code = cause[i] or cause[j] or "different_clique"
            got = pairs.get((i, j), {})
            if got.get("reason") != code:
                problems.append("%s: pair %d -> %d reason %r, expected %r" % (name, i, j, got.get("reason"), code))
            texts.add(got.get("reason_text", ""))
    for w in words:
        if not any(w in t for t in texts):
            problems.append("%s: no reason names %r (%s)" % (name, w, sorted(texts)[:2]))
    for key, value in DEVICE.get(name, {}).items():
        if r["devices"][0].get(key) != value:
            problems.append("%s: GPU 0 %s %r, expected %r" % (name, key, r["devices"][0].get(key), value))
    if r["warnings"]:
        problems.append("%s: warnings %s" % (name, r["warnings"]))


def check_others(cli):
    # Bridged islands: NVLink joins each pair, multicast none.
    r = result(cli, os.path.join(TOPO, "h200-nvl-bridged.json"), "nvlink")
    if r and [r["matrix"][0][1], r["matrix"][2][3], r["matrix"][0][2]] != [18, 18, 0]:
        problems.append("h200-nvl-bridged: nvlink matrix %s, expected 18 within each pair" % r["matrix"])
    # Confidential computing: peer access 1, multicast 0.
    r = result(cli, os.path.join(TOPO, "confidential-computing.json"), "p2p")
    if r and any(r["matrix"][i][j] != 1 for i in range(8) for j in range(8) if i != j):
        problems.append("confidential-computing: p2p matrix %s, expected 1 off the diagonal" % r["matrix"])


def check_record(cli, work):
    """A v4 machine recorded and replayed: the cliques survive, the result is the same."""
    os.makedirs(work, exist_ok=True)
    src = os.path.join(TOPO, "gb200-v4-multicast-cliques.json")
    rec = os.path.join(work, "v4-recorded.json")
    e = dict(os.environ, DMACONN_QUIET="1")
    p = subprocess.run(cli + ["--replay", src, "--record", rec, "-q"], env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    if p.returncode != 0 or not os.path.exists(rec):
        problems.append("--record: exit %d: %s" % (p.returncode, p.stderr.decode()[-300:]))
        return
    with open(rec) as f:
        recorded = json.load(f)
    fab = recorded["nvml"]["devices"][2]["fabric"]
    if fab.get("cliques") != [{"type": "unicast_pointer", "id": 32766}, {"type": "multicast_pointer", "id": 8},
                              {"type": "unicast_logical_endpoint", "id": 40},
                              {"type": "multicast_logical_endpoint", "id": 58}] or fab.get("clique_id") != 32766:
        problems.append("record: GPU 2's fabric recorded as %s" % fab)
    a, b = result(cli, src), result(cli, rec)
    if a is None or b is None or a["matrix"] != b["matrix"] or a["devices"] != b["devices"] or a["pairs"] != b["pairs"]:
        problems.append("record: the replayed recording differs from the machine:\n  %s\n  %s"
                        % (json.dumps(a)[:400], json.dumps(b)[:400]))
    # A clique type NVML names later: read and recorded as its number.
    later = json.loads(json.dumps(recorded))
    for dev in later["nvml"]["devices"]:
        dev["fabric"]["cliques"].append({"type": 9, "id": 3})
    src9, rec9 = os.path.join(work, "type9.json"), os.path.join(work, "type9-recorded.json")
    with open(src9, "w") as f:
        json.dump(later, f)
    r = result(cli, src9)
    if r and r["devices"][0]["fabric_cliques"][-1] != {"type": "9", "id": 3}:
        problems.append("a clique of type 9 reads as %s" % r["devices"][0]["fabric_cliques"])
    p = subprocess.run(cli + ["--replay", src9, "--record", rec9, "-q"], env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    if p.returncode != 0 or json.load(open(rec9))["nvml"]["devices"][0]["fabric"]["cliques"][-1] != {"type": 9, "id": 3}:
        problems.append("a clique of type 9 is not recorded as 9")
    # A recording made before v4 (no "cliques") answers v4 FUNCTION_NOT_FOUND: read as v3, as before.
    r = result(cli, os.path.join(TOPO, "hgx-h100-healthy.json"))
    if r and r["devices"][0].get("fabric_info_version") != "v3":
        problems.append("a fabric without cliques reads as %s" % r["devices"][0].get("fabric_info_version"))


def main():
    build, work = sys.argv[1], sys.argv[2]
    cli = os.environ.get("DMACONN_TEST_WRAPPER", "").split() + [os.path.join(build, "dmaconn")]
    listed = sorted(f[:-5] for f in os.listdir(TOPO) if f.endswith(".json"))
    if listed != sorted(CASES):
        problems.append("machines without a case, or cases without a machine: %s" % (set(listed) ^ set(CASES)))
    for name, case in sorted(CASES.items()):
        check_case(cli, name, *case)
    check_others(cli)
    check_record(cli, work)
    for p in problems:
        print("FAIL " + p)
    print("%d machines, %d problems" % (len(CASES), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
