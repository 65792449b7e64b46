#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Machines nobody wrote by hand: random topology files
(gen_random_topologies.py, fixed seeds) through the CLI.

For each file, every detector's JSON (--all) must claim nothing the file
does not prove:
  - cuda/p2p: a pair is non-zero only where the file answers OK for read,
    write and atomics from the first GPU to the second (its "p2p" entry or
    its "p2p_row" answer), and neither GPU is in MIG mode (where NVML has
    the MIG queries);
  - cuda/nvlink: a pair counts at most the links of the first GPU that the
    file gives as active (state 1), and none without a link;
  - every matrix is square, of the size of its device list, 0 on the
    diagonal;
  - rocm/infinity_fabric: connected only over an enabled XGMI link from
    the first GPU's KFD node to the second's; rocm/p2p: only over an
    enabled link with 32- and 64-bit atomics;
  - xpu/xelink: connected only where an XeLink edge (without an error)
    joins the two devices' cards; xpu/p2p: 0 where the pair's own entry
    is an error or lacks ATOMICS;
then record_test.py must find that each file, recorded, replays the same.

usage: random_topologies_test.py BUILD_DIR [SEED COUNT]
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_random_topologies  # noqa: E402
from record_test import env  # noqa: E402
from harness import finish  # noqa: E402


def expand_row(row):
    out = []
    for item in row.split(","):
        value, _, run = item.partition("*")
        out += [None if value == "-" else int(value)] * (int(run) if run else 1)
    return out


def p2p_answer(nvml, i, j):
    d = nvml["devices"][i]
    if "p2p_row" in d:
        k = expand_row(d["p2p_row"])[j]
        return None if k is None else nvml["p2p_answers"][k]
    for p in d.get("p2p", []):
        if p["peer"] == j:
            return p
    return None


def active_links(dev):
    n = 0
    for link in dev.get("nvlink") or []:
        if link.get("state") == 1:
            n += link.get("repeat", 1)
    return n


CHECKED = {"p2p": 0, "nvlink": 0, "xpu": 0, "rocm": 0}


def ze_ids(driver):
    """{uuid (32 hex digits): (driver's id "C" or "C.T", card)}, a tile's
    UUID defaulting to its card's with the last byte xor'ed with T+1."""
    ids = {}
    for c, card in enumerate(driver["devices"]):
        u = card["uuid"].replace("-", "").lower()
        ids[u] = (str(c), c)
        for t, tile in enumerate(card.get("subdevices", []) if isinstance(card.get("subdevices"), list) else []):
            tu = tile.get("uuid", "").replace("-", "").lower() or u[:30] + "%02x" % (int(u[30:], 16) ^ (t + 1))
            ids[tu] = ("%d.%d" % (c, t), c)
    return ids


def kfd_links(files, node):
    """[(type, node_to, flags)] of a KFD node's io_links and p2p_links."""
    out = []
    prefix = "/sys/class/kfd/kfd/topology/nodes/%d/" % node
    for path, text in files.items():
        if path.startswith(prefix) and ("/io_links/" in path or "/p2p_links/" in path):
            kv = dict(line.split(" ", 1) for line in text.splitlines() if " " in line)
            out.append((int(kv["type"]), int(kv["node_to"]), int(kv["flags"])))
    return out


def check_rocm(what, files, r, problems):
    """infinity_fabric: connected only over an enabled XGMI link of the
    first GPU's node to the second's; p2p: only over an enabled link with
    32- and 64-bit atomics."""
    m, devs = r["matrix"], r["devices"]
    for i, a in enumerate(devs):
        for j, b in enumerate(devs):
            if not m[i][j]:
                continue
            CHECKED["rocm"] += 1
            links = [l for l in kfd_links(files, a["kfd_node"]) if l[1] == b["kfd_node"] and l[2] & 1]
            if r["connection_type"] == "infinity_fabric":
                links = [l for l in links if l[0] == 11]
            else:
                links = [l for l in links if not l[2] & (4 | 8)]
            if not links:
                problems.append("%s: [%d][%d] = %d but no such link joins KFD nodes %d and %d" % (
                    what, i, j, m[i][j], a["kfd_node"], b["kfd_node"]))


def check_xpu(what, ze, r, problems):
    """xelink: connected only where an XeLink edge without an error joins the
    two devices' cards (or tiles); p2p: 0 where the pair's own entry fails
    or lacks ATOMICS."""
    m, devs = r["matrix"], r["devices"]
    for i, a in enumerate(devs):
        for j, b in enumerate(devs):
            if not m[i][j]:
                continue
            drivers = ze.get("drivers", [])
            k = a.get("level_zero_driver")
            if k is None or k != b.get("level_zero_driver") or k >= len(drivers):
                problems.append("%s: [%d][%d] = %d between devices of no one driver" % (what, i, j, m[i][j]))
                continue
            ids = ze_ids(drivers[k])
            ua, ub = (d.get("uuid", "").replace("-", "").lower() for d in (a, b))
            if ua not in ids or ub not in ids:
                problems.append("%s: [%d][%d] = %d between devices the file does not list" % (what, i, j, m[i][j]))
                continue
            (ia, ca), (ib, cb) = ids[ua], ids[ub]
            CHECKED["xpu"] += 1
            if r["connection_type"] == "xelink":
                joined = [e for e in drivers[k].get("edges", []) if e["model"].startswith("XeLink") and "error" not in e
                          and {int(e["a"].split(".")[0]), int(e["b"].split(".")[0])} == {ca, cb}]
                if not joined:
                    problems.append("%s: [%d][%d] = %d but no XeLink edge joins cards %d and %d" % (
                        what, i, j, m[i][j], ca, cb))
            else:
                for p in drivers[k].get("p2p", {}).get("pairs", []):
                    if (p["from"], p["to"]) == (ia, ib) and ("error" in p or "ATOMICS" not in p.get("flags", [])):
                        problems.append("%s: [%d][%d] = %d but the file answers %s" % (what, i, j, m[i][j], p))


def check(name, source, doc, problems):
    nvml = source.get("nvml", {})
    for r in doc.get("results", []):
        what = "%s %s/%s" % (name, r["device_type"], r["connection_type"])
        m, devs = r["matrix"], r["devices"]
        if len(m) != len(devs) or any(len(row) != len(devs) for row in m):
            problems.append("%s: a %d-row matrix for %d devices" % (what, len(m), len(devs)))
            continue
        if any(m[i][i] for i in range(len(m))):
            problems.append("%s: a device connected to itself" % what)
        if r["device_type"] == "rocm":
            check_rocm(what, source.get("files", {}), r, problems)
            continue
        if r["device_type"] == "xpu":
            check_xpu(what, source.get("level_zero", {}), r, problems)
            continue
        if r["device_type"] != "cuda" or r["connection_type"] not in ("p2p", "nvlink"):
            continue
        for i, a in enumerate(devs):
            for j, b in enumerate(devs):
                if not m[i][j]:
                    continue
                ia, ib = a.get("nvml_index"), b.get("nvml_index")
                if ia is None or ib is None:
                    problems.append("%s: [%d][%d] = %d between devices without an NVML index" % (what, i, j, m[i][j]))
                    continue
                da, db = nvml["devices"][ia], nvml["devices"][ib]
                CHECKED[r["connection_type"]] += 1
                if r["connection_type"] == "p2p":
                    ans = p2p_answer(nvml, ia, ib) or {}
                    if any(ans.get(c) != "OK" for c in ("read", "write", "atomics")):
                        problems.append("%s: [%d][%d] = %d but the file answers %s" % (what, i, j, m[i][j], ans))
                    # An NVML without the MIG queries predates MIG.
                    mig_known = "nvmlDeviceGetMigMode" not in nvml.get("missing_functions", [])
                    if mig_known and (da.get("mig_mode") == [1, 1] or db.get("mig_mode") == [1, 1]):
                        problems.append("%s: [%d][%d] = %d with a GPU in MIG mode" % (what, i, j, m[i][j]))
                elif m[i][j] > active_links(da):
                    problems.append("%s: [%d][%d] = %d, more than the %d active links of NVML device %d" % (
                        what, i, j, m[i][j], active_links(da), ia))


def main():
    if len(sys.argv) not in (2, 4):
        print(__doc__, file=sys.stderr)
        return 2
    build = os.path.abspath(sys.argv[1])
    seed, count = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) == 4 else (20261202, 120)
    cli = os.path.join(build, "dmaconn")
    stand_in = os.path.join(build, "tests", "libdmaconn_replay_faults.so")
    wrapper = os.environ.get("DMACONN_TEST_WRAPPER", "").split()
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        if subprocess.run([sys.executable, os.path.join(HERE, "gen_random_topologies.py"), str(seed), str(count),
                           tmp]).returncode:
            return 1
        files = sorted(os.path.join(tmp, f) for f in os.listdir(tmp))
        for f in files:
            name = os.path.basename(f)
            with open(f) as fh:
                source = json.load(fh)
            for live in (None, {"DMACONN_REPLAY_LIVE_ENV": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}):
                p = subprocess.run(wrapper + [cli, "--replay", f, "--json", "--all", "-q"], env=env(stand_in, live),
                                   capture_output=True, timeout=300)
                try:
                    doc = json.loads(p.stdout)
                except ValueError:
                    problems.append("%s: exit %d, no JSON: %s" % (name, p.returncode, p.stderr[-300:]))
                    continue
                if p.returncode not in (0, 1) or (p.returncode and "error" not in doc):
                    problems.append("%s: exit %d: %s" % (name, p.returncode, p.stderr[-300:]))
                check(name, source, doc, problems)
        rec = subprocess.run([sys.executable, os.path.join(HERE, "record_test.py"), build] + files,
                             capture_output=True, text=True, timeout=3000)
        if rec.returncode:
            problems.append("record_test.py:\n" + rec.stdout[-3000:] + rec.stderr[-1000:])
    if not all(CHECKED.values()):
        problems.append("no connected pair to check")
    return finish(problems, "%d random topologies (seed %d): connected pairs checked: %d cuda/p2p, %d cuda/nvlink, "
                  "%d rocm, %d xpu" % (count, seed, CHECKED["p2p"], CHECKED["nvlink"], CHECKED["rocm"], CHECKED["xpu"]))


if __name__ == "__main__":
    sys.exit(main())
