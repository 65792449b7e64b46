#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""cuda/multicast across MPI ranks, on the GB200 trays of
topologies/multicast/ (gen_multicast.py), one replay file per rank.

usage: multicast_mpi_test.py --mpiexec MPIEXEC --test TEST_MPI --cli DMACONN [FILTER]

Each scenario names its ranks' trays; what the test knows of a tray is
only what gen_multicast.py made it (its host, NVLink domain, multicast
clique and IMEX state), and from that it states the whole global matrix
and, for every pair that is 0, its reason and reason text.  test_mpi runs
on every rank (run_mpi.py's launcher) and checks them there, and that the
result, pair properties included, is the same on every rank.

One scenario has two ranks of one node ("twin") see it differently (NVML's
answer changed between them): a pair is 1 only where both ranks' node views
say so, with the reason the node gave (from `dmaconn --replay` of that view).
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_mpi  # noqa: E402
from harness import Report  # noqa: E402

RACK_A = "5e2a9c41-7b3d-4f60-a1e8-92c4d0b7f3a6"
RACK_B = "0b9d6f1e-3c58-4a27-9e40-7d1c2a86f5b3"
BUSES = ["0008:01:00.0", "0009:01:00.0", "0018:01:00.0", "0019:01:00.0"]
IMEX_TEXT = {
    "imex_channel_missing": "no IMEX channel in /dev/nvidia-caps-imex-channels/ (major 234): the administrator "
                            "creates one (mknod channel0 c 234 0, or the driver's NVreg_CreateImexChannel0=1)",
    "imex_channel_no_permission": "/dev/nvidia-caps-imex-channels/channel0 cannot be opened for reading and "
                                  "writing by this user",
    "imex_module_missing": "/proc/devices lists no nvidia-caps-imex-channels: the NVIDIA driver offers no IMEX "
                           "channels (not loaded, or older than R550)",
}


def tray(host):
    """What gen_multicast.py made of a tray: (cluster, multicast clique, IMEX reason or None)."""
    if host == "noimex-tray":
        return RACK_A, "5", "imex_channel_missing"
    if host == "denied-tray":
        return RACK_A, "5", "imex_channel_no_permission"
    if host == "idle-tray":
        return RACK_A, "5", "imex_module_missing"
    if host == "mcsplit-tray":
        return RACK_A, "6", None
    if host.startswith("rack2-"):
        return RACK_B, "5", None
    return RACK_A, "5", None


def devices(sc):
    """(rank, host, local ordinal, bus id) of each global device, in rank order."""
    out = []
    for r, rank in enumerate(sc["ranks"]):
        host = rank["tray"]
        locals_ = [int(x) for x in rank["cvd"].split(",")] if "cvd" in rank else range(4)
        for k, phys in enumerate(locals_):
            out.append((r, host, k, BUSES[phys]))
    return out


def expected(sc):
    """The matrix, every zero's (reason, text), and the warnings."""
    devs = devices(sc)
    n = len(devs)
    m = [[0] * n for _ in range(n)]
    why = {}
    blocked = {}
    for g in range(n):
        for h in range(n):
            if g == h:
                continue
            a, b = sorted([devs[g], devs[h]])
            if a[1] == b[1]:  # one node: its own detection, IMEX never asked
                m[g][h] = 1
                continue
            at = ["rank %d (%s) GPU %d (%s)" % (d[0], d[1], d[2], d[3]) for d in (a, b)]
            ta, tb = tray(a[1]), tray(b[1])
            if ta[0] != tb[0]:
                why[g, h] = ("different_cluster", "%s is in NVLink domain %s, %s in %s" % (at[0], ta[0], at[1], tb[0]))
            elif ta[1] != tb[1]:
                why[g, h] = ("different_clique", "%s is in multicast clique %s, %s in %s" % (at[0], ta[1], at[1], tb[1]))
            elif ta[2] or tb[2]:
                k = 0 if ta[2] else 1
                code = (ta, tb)[k][2]
                why[g, h] = (code, "%s: its node is not ready for IMEX: %s" % (at[k], IMEX_TEXT[code]))
                d = (a, b)[k]
                blocked.setdefault(d[1], (d[0], code))
            else:
                m[g][h] = 1
    warnings = ["rank %d (%s): not ready for IMEX (%s): %s; its GPUs are 0 in cuda/multicast to other nodes' GPUs"
                % (r, host, code, IMEX_TEXT[code]) for host, (r, code) in blocked.items()]
    return m, why, warnings


NVL72 = [{"tray": "nvl72-tray%02d" % k} for k in range(1, 19)]
SCENARIOS = [
    # One rack: one NVLink domain of 72 GPUs, every pair 1.
    {"name": "nvl72-one-domain", "ranks": NVL72},
    # Two racks with the same clique ids, different cluster UUIDs: two domains.
    {"name": "two-racks-same-clique", "ranks": [{"tray": "nvl72-tray01"}, {"tray": "rack2-tray01"},
                                                 {"tray": "nvl72-tray02"}, {"tray": "rack2-tray02"}]},
    # A tray without an IMEX channel: 0 to every other node, 1 within itself.
    {"name": "tray-without-imex-channel", "ranks": [{"tray": "nvl72-tray01"}, {"tray": "nvl72-tray02"},
                                                     {"tray": "noimex-tray"}]},
    # The same tray, one rank per GPU: still one node, still 1 within it.
    {"name": "tray-without-imex-rank-per-gpu", "ranks": [{"tray": "nvl72-tray01"}] + [
        {"tray": "noimex-tray", "cvd": str(k)} for k in range(4)]},
    # A channel the user may not open; a node without the IMEX module.
    {"name": "imex-denied-and-no-module", "ranks": [{"tray": "denied-tray"}, {"tray": "nvl72-tray03"},
                                                     {"tray": "idle-tray"}]},
    # The multicast clique (v4's multicast pointer clique) decides, not the unicast one.
    {"name": "multicast-clique-split", "ranks": [{"tray": "nvl72-tray01"}, {"tray": "mcsplit-tray"}]},
    # Two ranks of one node whose views differ: the AND of both verdicts.
    {"name": "one-node-two-views", "ranks": [{"tray": "twin-a", "cvd": "0"}, {"tray": "twin-b", "cvd": "3"}],
     "twin": True},
    # An idle node without IMEX: multicast within it is untouched, no warning.
    {"name": "idle-node-without-imex", "ranks": [{"tray": "idle-tray"}]},
    {"name": "idle-node-without-imex-rank-per-gpu", "ranks": [{"tray": "idle-tray", "cvd": str(k)}
                                                               for k in range(4)]},
]


def node_reason(cli, tray, i, j):
    """(reason, reason_text) of pair i -> j in a detection over the whole replayed node."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DMACONN_", "CUDA_"))}
    out = subprocess.run([cli, "--replay", os.path.join(run_mpi.TOPO, "multicast", tray + ".json"), "-d", "cuda",
                          "-c", "multicast", "--json", "-q"], capture_output=True, text=True, env=env,
                         timeout=60, check=True).stdout
    pair = [p for p in json.loads(out)["results"][0]["pairs"] if (p["from"], p["to"]) == (i, j)][0]
    return pair["reason"], pair["reason_text"]


def twin_expectation(cli):
    """one-node-two-views: rank 0 contributes twin-a's GPU 0, rank 1 twin-b's GPU 3 (in progress there)."""
    code, text = node_reason(cli, "twin-b", 0, 3)
    lines = ["connection multicast", "size 2", "row 0 0", "row 0 0"]
    for g, h in ((0, 1), (1, 0)):  # rank 0's view says 1, rank 1's says 0: the pair is 0, rank 1's reason
        lines += ["pair %d %d reason %s" % (g, h, code), "pair %d %d reason_text rank 1 (twin): %s" % (g, h, text)]
    lines += ["pairs reason 2", "pairs reason_text 2", "prop 0 host twin", "prop 1 host twin",
              "prop 0 multicast_supported 1", "prop 1 multicast_supported 0", "prop 1 multicast_reason " + code,
              "prop 1 pci_bus_id 0019:01:00.0"]
    return "\n".join(lines) + "\n", 2


def expectation_text(sc):
    m, why, warnings = expected(sc)
    n = len(m)
    lines = ["connection multicast", "size %d" % n]
    lines += ["row " + " ".join(str(x) for x in row) for row in m]
    lines.append("warnings %d" % len(warnings))
    lines += ["contains " + w for w in warnings]
    zeros = 0
    for g in range(n):
        for h in range(n):
            if g != h and m[g][h] == 0:
                zeros += 1
                code, text = why[g, h]
                lines.append("pair %d %d reason %s" % (g, h, code))
                lines.append("pair %d %d reason_text %s" % (g, h, text))
    lines += ["pairs reason %d" % zeros, "pairs reason_text %d" % zeros]
    for g, d in enumerate(devices(sc)):
        lines.append("prop %d host %s" % (g, d[1]))
        lines.append("prop %d pci_bus_id %s" % (g, d[3]))
        lines.append("prop %d multicast_supported 1" % g)
    return "\n".join(lines) + "\n", zeros


def main():
    args = run_mpi.parser().parse_args()
    open_mpi = run_mpi.is_open_mpi(args.mpiexec)
    report = Report()
    with tempfile.TemporaryDirectory() as tmp:
        for sc in SCENARIOS:
            if args.filter not in sc["name"]:
                continue
            ranks = [dict({"replay": os.path.join("multicast", r["tray"] + ".json")},
                          **({"cvd": r["cvd"]} if "cvd" in r else {})) for r in sc["ranks"]]
            text, zeros = twin_expectation(args.cli) if sc.get("twin") else expectation_text(sc)
            status, out, err = run_mpi.run_test_mpi(args, {"name": sc["name"], "ranks": ranks}, text, tmp, open_mpi)
            report.check(status == 0, "%s (%d ranks, %d zero pairs)" % (sc["name"], len(ranks), zeros),
                         "exit status %s\n" % status + "".join("    " + l + "\n" for l in (out + err).splitlines()[:60]))
    report.check(report.passed + report.failed > 0, "at least one scenario ran")
    return report.done()

if __name__ == "__main__":
    sys.exit(main())
