#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""--format slurm-topology read by a real Slurm controller: slurmctld with
TopologyPlugin=topology/block (Slurm 23.11 or newer) loads the file, and
`scontrol show topology` lists one block per NVLink domain with exactly the
nodes dmaconn put in it (read back through `scontrol show hostnames`).

Cases: two full NVL72 racks (18 trays each); racks of different sizes
(18, 4 and 1 trays, and a node without a domain), which Slurm refuses
unless the base block size is the smallest domain's (without BlockSizes it
takes the first block's node count and stops: "children count lower than
bblock_node_cnt"); the same with the smallest domain listed first.

The controller runs inside a root file system that has it (Debian 13's
slurmctld and slurm-client, made by .ci/run with debootstrap), entered
with chroot: DMACONN_SLURM_ROOT (default /opt/dmaconn-slurm).  It listens
on 127.0.0.1 only, with a key of its own, and is stopped at the end.

Usage: slurm_block_test.py BUILD_DIR   (run from the source root, as root)
Exit status 77 (skipped) when there is no such root or no root privilege:
nothing was checked then.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Report, clean_env, cli_command  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
ROOT = os.environ.get("DMACONN_SLURM_ROOT", "/opt/dmaconn-slurm")
MPI = "tests/mpi/topologies"
RACK = "5e2a9c41-7b3d-4f60-a1e8-92c4d0b7f3a6"
OTHER = "0b6f2d18-44c3-4e7a-9c21-d5a8e3f07b64"

if os.geteuid() != 0 or not os.path.lexists(os.path.join(ROOT, "usr/sbin/slurmctld")):
    print("skipped: needs root and a Slurm >= 23.11 root file system at %s (DMACONN_SLURM_ROOT)" % ROOT)
    sys.exit(77)

ENV = clean_env({"DMACONN_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1",
                 "DMACONN_SYSFS_ROOT": "tests/sysfs/no-nvidia", "DMACONN_QUIET": "1"})
CLI = cli_command(BUILD)
report = Report()


def in_root(*args, timeout=60):
    return subprocess.run(["chroot", ROOT] + list(args), capture_output=True, text=True, timeout=timeout,
                          env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "SLURM_CONF": CONF_IN_ROOT})


def document(topology):
    p = subprocess.run(CLI + ["--replay", topology, "--json"], capture_output=True, text=True, env=ENV, timeout=120)
    return json.loads(p.stdout)


def moved(doc, cluster):
    doc = json.loads(json.dumps(doc))
    for r in doc["results"]:
        for d in r["devices"]:
            d["cluster_uuid"] = cluster
    return doc


# A scratch directory inside the root: the controller's configuration, state and log.
work = tempfile.mkdtemp(prefix="dmaconn-slurm-block-", dir=os.path.join(ROOT, "tmp"))
WORK_IN_ROOT = "/" + os.path.relpath(work, ROOT)
CONF_IN_ROOT = WORK_IN_ROOT + "/slurm.conf"
mounted = False
if not os.path.exists(os.path.join(ROOT, "proc/self")):
    mounted = subprocess.run(["mount", "-t", "proc", "proc", os.path.join(ROOT, "proc")]).returncode == 0
hosts = os.path.join(ROOT, "etc/hosts")
if not os.path.exists(hosts) or "localhost" not in open(hosts).read():
    with open(hosts, "a") as f:
        f.write("127.0.0.1 localhost\n")
version = in_root("slurmctld", "-V").stdout.strip()
m = re.search(r"(\d+)\.(\d+)", version)
if not m or (int(m.group(1)), int(m.group(2))) < (23, 11):
    print("skipped: %s has %r, topology/block needs Slurm 23.11 or newer" % (ROOT, version))
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(77)
print("controller: %s (%s)" % (version, ROOT))

with open(os.path.join(work, "slurm.key"), "wb") as f:
    f.write(os.urandom(1024))
os.chmod(os.path.join(work, "slurm.key"), 0o600)
port = 20000 + os.getpid() % 20000


def controller(case, nodes, topology):
    """Starts slurmctld on topology for nodes; `scontrol show topology` as
    {block: [nodes]}, or None with the controller's last log lines."""
    state = os.path.join(work, case)
    os.makedirs(state)
    with open(os.path.join(work, "topology.conf"), "w") as f:
        f.write(topology)
    with open(os.path.join(work, "slurm.conf"), "w") as f:
        f.write("\n".join([
            "ClusterName=dmaconn", "SlurmctldHost=localhost(127.0.0.1)", "SlurmUser=root",
            "SlurmctldPort=%d" % port, "SlurmdPort=%d" % (port + 1), "AuthType=auth/slurm", "CredType=cred/slurm",
            "AuthInfo=keyfile=%s/slurm.key" % WORK_IN_ROOT, "StateSaveLocation=%s/%s" % (WORK_IN_ROOT, case),
            "SlurmctldPidFile=%s/%s/pid" % (WORK_IN_ROOT, case), "SlurmctldLogFile=%s/%s/log" % (WORK_IN_ROOT, case),
            "TopologyPlugin=topology/block", "SelectType=select/cons_tres", "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none", "MailProg=/bin/true",
            "NodeName=%s NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN" % ",".join(nodes),
            "PartitionName=all Nodes=ALL Default=YES", ""]))
    ctld = subprocess.Popen(["chroot", ROOT, "slurmctld", "-D", "-i", "-f", CONF_IN_ROOT],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    got = None
    try:
        for _ in range(60):
            if ctld.poll() is not None:
                break
            if in_root("scontrol", "ping").returncode == 0:
                out = in_root("scontrol", "show", "topology").stdout
                got = {}
                for line in out.splitlines():
                    b = re.search(r"BlockName=(\S+) .*Nodes=(\S+)", line)
                    if b:
                        names = in_root("scontrol", "show", "hostnames", b.group(2)).stdout.split()
                        got[b.group(1)] = sorted(names)
                break
            time.sleep(0.5)
    finally:
        in_root("scontrol", "shutdown")
        try:
            ctld.wait(timeout=20)
        except subprocess.TimeoutExpired:
            ctld.kill()
            ctld.wait()
    if got is None:
        log = os.path.join(state, "log")
        tail = open(log).read().splitlines()[-3:] if os.path.exists(log) else ["(no log)"]
        return None, " | ".join(tail)
    return got, ""


tray = document(MPI + "/tray-a.json")
other = moved(tray, OTHER)
alone = document(MPI + "/tray-c.json")  # clique 7 of RACK
hgx = document(MPI + "/hgx-1.json")     # no multi-node domain
A, B, C = "nvl_%s_32766" % RACK, "nvl_%s_32766" % OTHER, "nvl_%s_7" % RACK


def case(name, docs, want):
    d = os.path.join(work, "docs-" + name)
    os.makedirs(d)
    files = []
    for node, doc in docs:
        files.append(os.path.join(d, node + ".json"))
        with open(files[-1], "w") as f:
            json.dump(doc, f)
    p = subprocess.run(CLI + ["--format", "slurm-topology"] + files, capture_output=True, text=True, env=ENV,
                       timeout=120)
    report.check(p.returncode == 0, "%s: dmaconn --format slurm-topology exits 0" % name, p.stderr)
    got, log = controller(name, [n for n, _ in docs], p.stdout)
    report.check(got is not None, "%s: slurmctld (topology/block) starts on dmaconn's file" % name,
                 "it stopped: %s\n%s" % (log, p.stdout))
    if got is not None:
        report.equal("%s: scontrol show topology's blocks and their nodes" % name, got, want)


full = [("gb%02d" % k, tray) for k in range(1, 19)] + [("gc%02d" % k, other) for k in range(1, 19)]
case("two-full-racks", full, {A: ["gb%02d" % k for k in range(1, 19)], B: ["gc%02d" % k for k in range(1, 19)]})
mixed = [("gb%02d" % k, tray) for k in range(1, 19)] + [("rb%d" % k, other) for k in range(1, 5)]
mixed += [("tc", alone), ("hgx", hgx)]
want = {A: ["gb%02d" % k for k in range(1, 19)], B: ["rb%d" % k for k in range(1, 5)], C: ["tc"]}
case("racks-of-18-4-1", mixed, want)
case("smallest-first", [("tc", alone)] + [("rb%d" % k, other) for k in range(1, 5)]
     + [("gb%02d" % k, tray) for k in range(1, 19)], want)

shutil.rmtree(work, ignore_errors=True)
if mounted:
    subprocess.run(["umount", os.path.join(ROOT, "proc")])
sys.exit(report.done())
