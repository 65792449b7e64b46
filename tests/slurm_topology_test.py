#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""--format slurm-topology: many nodes' `dmaconn --json` documents as Slurm
topology/block lines, one block per NVLink domain (cluster UUID + clique,
the multicast clique where a document gives one):

  - a GB200 NVL72 rack of 18 trays is one block, Nodes=tray[01-18], and
    Slurm's own hostlist parser (scontrol show hostnames) reads back the 18;
  - two racks that share a clique id under different cluster UUIDs are two
    blocks; a tray in another clique of the same cluster is a block of its own;
  - a node without a domain (a single-node HGX with the zero cluster UUID,
    registration in progress or failed, a PCIe node, clique 0, GPUs in two
    domains) has no block, a comment and a line on standard error say why;
  - the multicast clique wins over clique_id where a document has it (a v4
    recording's multicast pointer clique), and so in --format nfd's clique
    label;
  - standard input: documents one after another, named "node: " as pdsh and
    clush prefix them, or by their devices' host as --mpi output has;
  - what cannot be used (an unreadable file, another document, a node given
    twice, a name that is no Slurm node name) makes the exit status 1, and
    detection options with it are a usage error.

Usage: slurm_topology_test.py BUILD_DIR   (run from the source root)
Exit status 77 (skipped) only when every assertion passed but scontrol, to
read the hostlists back, is not installed.
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import CliRun, Report  # noqa: E402

C = CliRun(sys.argv[1], "slurm-topology", env={"DMACONN_QUIET": "1"})
TMP, run, write = C.tmp, C.run, C.write
MPI = "tests/mpi/topologies"
report = Report()
check = report.check


def document(topology):
    st, out, err = run("--replay", topology, "--json")
    return json.loads(out)


def blocks(out):
    """{BlockName: Nodes expression} of the output's block lines; BlockSizes,
    where the blocks differ in size, must be Slurm's default levels over
    the smallest block (slurm_block_test.py has a real slurmctld read it)."""
    got = {}
    sizes = [line for line in out.splitlines() if line.startswith("BlockSizes=")]
    for line in out.splitlines():
        if line.startswith("#") or not line or line.startswith("BlockSizes="):
            continue
        m = re.fullmatch(r"BlockName=(\S+) Nodes=(\S+)", line)
        check(m is not None, "a block line is BlockName=... Nodes=...: %r" % line)
        if m:
            got[m.group(1)] = m.group(2)
    counts = sorted(len(expand(nodes)) for nodes in got.values())
    if counts and counts[0] != counts[-1]:
        want = "BlockSizes=" + ",".join(str(counts[0] << k) for k in range(5))
        check(sizes == [want], "blocks of %d to %d nodes: %s (%s)" % (counts[0], counts[-1], want, sizes))
    else:
        check(not sizes, "blocks of one size: no BlockSizes line (%s)" % sizes)
    return got


def expand(expr):
    """A hostlist expression's names, as Slurm reads it (our reading)."""
    names = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", expr):
        m = re.fullmatch(r"([^\[]*)\[([^\]]*)\]", part)
        if not m:
            names.append(part)
            continue
        for r in m.group(2).split(","):
            a, _, b = r.partition("-")
            width = len(a) if a.startswith("0") else 1
            for v in range(int(a), int(b or a) + 1):
                names.append("%s%0*d" % (m.group(1), width, v))
    return names


def with_domain(doc, cluster=None, clique=None, multicast=None, only=None):
    """The document with its devices' cluster UUID, clique or multicast clique changed."""
    doc = json.loads(json.dumps(doc))
    for r in doc["results"]:
        for i, d in enumerate(r["devices"]):
            if only is not None and i not in only:
                continue
            if cluster is not None:
                d["cluster_uuid"] = cluster
            if clique is not None:
                d["clique_id"] = clique
                if "multicast_clique_id" in d:  # a v3 answer: multicast follows clique_id
                    d["multicast_clique_id"] = clique
            if multicast is not None:
                d["multicast_clique_id"] = multicast
    return doc


tray = document(MPI + "/tray-a.json")
RACK = "5e2a9c41-7b3d-4f60-a1e8-92c4d0b7f3a6"
OTHER = "0b6f2d18-44c3-4e7a-9c21-d5a8e3f07b64"
BLOCK_A = "nvl_%s_32766" % RACK

# --- one rack of 18 trays: one block.
os.makedirs(os.path.join(TMP, "rack"))
rack = [write("rack/tray%02d.json" % k, tray) for k in range(1, 19)]
st, out, err = run("--format", "slurm-topology", *reversed(rack))
got = blocks(out)
check(st == 0 and got == {BLOCK_A: "tray[01-18]"} and not err,
      "18 trays of one rack: one block tray[01-18] (%s): %s %r" % (st, got, err))
check("# dmaconn: NVLink domain 1: cluster %s, clique 32766: 18 nodes, 72 GPUs" % RACK in out,
      "the block's comment counts 18 nodes and 72 GPUs: %r" % out[:400])
hostlists = [got.get(BLOCK_A, "")]

# --- two racks sharing clique 32766 under different cluster UUIDs, and a tray in clique 7.
os.makedirs(os.path.join(TMP, "two"))
files = [write("two/a%d.json" % k, tray) for k in (1, 2, 3, 10)]
files += [write("two/b-%d.json" % k, with_domain(tray, cluster=OTHER)) for k in (1, 2)]
files.append(write("two/c7.json", document(MPI + "/tray-c.json")))
st, out, err = run("--format", "slurm-topology", *files)
got = blocks(out)
want = {BLOCK_A: "a[1-3,10]", "nvl_%s_32766" % OTHER: "b-[1-2]", "nvl_%s_7" % RACK: "c7"}
check(st == 0 and got == want, "two racks with one clique id, a tray in another clique: three blocks (%s): %s"
      % (st, got))
hostlists += list(got.values())

# --- nodes without a domain: no block, a comment and a line on stderr each.
os.makedirs(os.path.join(TMP, "none"))
alone = {
    "hgx-1": (document(MPI + "/hgx-1.json"), "GPU 0 (0000:18:00.0): cluster UUID zero, not in a multi-node NVLink domain"),
    "tray-d": (document(MPI + "/tray-d.json"), "GPU 0 (0008:01:00.0): NVSwitch fabric registration in_progress"),
    "tray-f": (document(MPI + "/tray-f.json"),
               "GPU 0 (0008:01:00.0): NVSwitch fabric registration completed with NVML_ERROR_INSUFFICIENT_RESOURCES"),
    "pcie": (document("tests/topologies/a100-pcie-4.json"),
             "GPU 0 (0000:17:00.0) has no NVSwitch fabric (no fabric facts)"),
    "zero-clique": (with_domain(tray, clique=0), "GPU 0 (0008:01:00.0): clique id 0, not in a multi-node NVLink domain"),
    "split": (with_domain(tray, clique=7, only=[2, 3]),
              "its GPUs are in different NVLink domains (%s.32766, %s.7)" % (RACK, RACK)),
}
files = [write("none/%s.json" % n, d) for n, (d, _) in alone.items()] + [write("none/ok.json", tray)]
st, out, err = run("--format", "slurm-topology", *files)
got = blocks(out)
check(st == 0 and got == {BLOCK_A: "ok"}, "only the node with a domain has a block (%s): %s" % (st, got))
for n, (_, why) in alone.items():
    line = "node %s has no NVLink domain, so no block: %s" % (n, why)
    check("# dmaconn: " + line + "\n" in out and "dmaconn: --format slurm-topology: " + line + "\n" in err,
          "%s: said in a comment and on stderr: %r" % (n, line))

# --- the multicast clique wins where the document gives one (v4's typed cliques).
os.makedirs(os.path.join(TMP, "mc"))
files = [write("mc/m1.json", with_domain(tray, multicast=9)), write("mc/m2.json", with_domain(tray, multicast="9")),
         write("mc/u1.json", tray)]
st, out, err = run("--format", "slurm-topology", *files)
got = blocks(out)
check(st == 0 and got == {"nvl_%s_9" % RACK: "m[1-2]", BLOCK_A: "u1"},
      "multicast_clique_id (integer or decimal text) names the domain: %s" % got)

# A real v4 recording: the tray's multicast pointer clique (9), not its unicast one (32766).
V4 = "tests/topologies-multicast/gb200-v4-healthy.json"
st, out, err = run("--format", "slurm-topology", write("mc/v4tray.json", document(V4)))
check(st == 0 and blocks(out) == {"nvl_%s_9" % RACK: "v4tray"}, "a v4 tray is in its multicast clique: %s" % blocks(out))

# --- the NFD clique label (GPU feature discovery's cluster_uuid.clique) follows the multicast clique too.
def nfd_clique(*args):
    st, out, _ = run("--format", "nfd", *args)
    labels = [l.split("=", 1)[1] for l in out.splitlines() if "dmaconn-cuda-fabric-clique=" in l]
    return st, labels


check(nfd_clique("--replay", V4) == (0, ["%s.9" % RACK]), "nfd: a v4 tray's label names its multicast clique: %s"
      % (nfd_clique("--replay", V4),))
check(nfd_clique("--replay", V4, "-d", "cuda", "-c", "nvlink") == (0, ["%s.32766" % RACK]),
      "nfd: without cuda/multicast among the results, clique_id")
check(nfd_clique("--replay", "tests/topologies-multicast/gb200-v4-multicast-cliques.json") == (0, []),
      "nfd: GPUs of one tray in two multicast cliques: no clique label")
check(nfd_clique("--replay", MPI + "/tray-a.json") == (0, ["%s.32766" % RACK]),
      "nfd: a v3 tray: its clique_id, which multicast follows")

# --- standard input: "node: {...}" lines (pdsh, clush), and --mpi documents naming hosts.
lines = "".join("gb%02d: %s\n" % (k, json.dumps(tray)) for k in (7, 8, 9))
st, out, err = run("--format", "slurm-topology", stdin=lines)
check(st == 0 and blocks(out) == {BLOCK_A: "gb[07-09]"}, "pdsh lines on stdin (%s): %s %r" % (st, blocks(out), err))
st, out, err = run("--format", "slurm-topology", "-", stdin=lines)
check(st == 0 and blocks(out) == {BLOCK_A: "gb[07-09]"}, "'-' is standard input (%s): %s" % (st, blocks(out)))
mpi = json.loads(json.dumps(tray))
for r in mpi["results"]:
    for i, d in enumerate(r["devices"]):
        d["host"] = "rank-host%d" % (i // 2)
st, out, err = run("--format", "slurm-topology", stdin=json.dumps(mpi) + "\n" + json.dumps(tray))
check(st == 1 and blocks(out) == {BLOCK_A: "rank-host[0-1]"} and "document 2 names no node" in err,
      "--mpi devices name their hosts; a bare document on stdin names none: exit 1 (%s): %s %r"
      % (st, blocks(out), err))

# --- what cannot be used: exit status 1, the rest still written.
bad = [write("bad/x.json", tray) if os.makedirs(os.path.join(TMP, "bad"), exist_ok=True) is None else None,
       os.path.join(TMP, "bad", "missing.json"), write("bad/not-dmaconn.json", {"version": 2, "results": []}),
       write("bad/trunc.json", json.dumps(tray)[:100]), write("bad/we ird.json", tray)]
st, out, err = run("--format", "slurm-topology", *bad)
check(st == 1 and blocks(out) == {BLOCK_A: "x"} and "cannot read" in err and "not a dmaconn --json document" in err
      and "trunc.json" in err and "not a Slurm node name" in err, "bad inputs are said, exit 1 (%s): %r" % (st, err))
fifo = os.path.join(TMP, "bad", "fifo.json")
os.mkfifo(fifo)
st, out, err = run("--format", "slurm-topology", bad[0], fifo, "/dev/zero")
check(st == 1 and blocks(out) == {BLOCK_A: "x"} and err.count("not a regular file") == 2,
      "a FIFO and a device are refused, not waited on or read without end (%s): %r" % (st, err))
st, out, err = run("--format", "slurm-topology", bad[0], write("x.json", tray))
check(st == 1 and "node x is given twice" in err, "a node given twice: exit 1 (%s): %r" % (st, err))
for args in (["-d", "cuda", "-c", "nvlink"], ["--replay", MPI + "/tray-a.json"], ["--all"]):
    st, out, err = run("--format", "slurm-topology", *args, bad[0])
    check(st == 2 and "no detection option goes with it" in err, "%s: a usage error (%s): %r" % (args, st, err))
st, out, err = run(bad[0])
check(st == 2 and "unknown command" in err, "a file without --format slurm-topology is still refused (%s)" % st)
st, out, err = run("-q", bad[0])
check(st == 2 and "unexpected argument" in err, "... after an option too (%s)" % st)

# --- names that share a prefix at several widths, padded or not, and none.
odd = ["n1", "n2", "n10", "n09", "n010", "n8", "gpu", "gpu-a", "x5y", "rack1-07", "rack1-08", "rack2-07"]
os.makedirs(os.path.join(TMP, "odd"))
st, out, err = run("--format", "slurm-topology", *[write("odd/%s.json" % n, tray) for n in odd])
got = blocks(out)
expr = got.get(BLOCK_A, "")
check(st == 0 and sorted(expand(expr)) == sorted(odd), "a hostlist of odd names: %s -> %s" % (expr, expand(expr)))
hostlists.append(expr)

# --- Slurm's own hostlist parser reads the Nodes= expressions back.
for expr in hostlists:
    check(len(expand(expr)) == len(set(expand(expr))), "hostlist %s names distinct nodes" % expr)
scontrol = shutil.which("scontrol")
if scontrol:
    conf = write("slurm.conf", "ClusterName=t\nSlurmctldHost=localhost\nNodeName=x CPUs=1\n"
                 "PartitionName=p Nodes=ALL\n")
    for expr in hostlists:
        p = subprocess.run([scontrol, "show", "hostnames", expr], capture_output=True, text=True,
                           env=dict(os.environ, SLURM_CONF=conf))
        check(p.returncode == 0 and sorted(p.stdout.split()) == sorted(expand(expr)),
              "scontrol show hostnames %s: %s" % (expr, p.stdout.split()))
else:
    print("skip: scontrol (slurm-client) is not installed: hostlists not read back by Slurm")

sys.exit(report.done() or (0 if scontrol else 77))
