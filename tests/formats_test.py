#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`dmaconn --format` against the programs that read each format.

usage: formats_test.py BUILD_DIR [MPIEXEC]

On replays of healthy and degraded nodes:
  - prometheus: `promtool check metrics` accepts it, and its gauges hold the
    matrices of --json (links per pair, device count, fully connected);
    under --mpi (MPIEXEC given), rank 0 writes the job's, every device with
    its rank and host;
  - nfd: every line is a Kubernetes label (the apimachinery rules, below),
    with the expected values;
  - slurm: `slurmd -G` reads the lines back (File= pointed at character
    devices made here) with the Links= the matrix gives, File=/dev/nvidiaN
    with N the minor number (in that order, slurmd's Index=), the NVML
    index only where the minor number is unknown, said in a comment and a
    warning; refused where that would give two GPUs one file;
  - nccl-xml: the structure NCCL's src/graph/xml.cc reader and topo.cc
    accept (elements, required attributes, bus ids, limits), with the NVLink
    counts of the matrix.  NCCL itself loads it in tests/device/nccl_topo.sh.
promtool and slurmd come from Debian's prometheus and slurmd packages, which
CI installs in a step of its own (.ci/run: their services kept from
starting); where one is missing the test fails under CI=1 and
is skipped (77) otherwise.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from harness import Report, clean_env

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TOPO = os.path.join(HERE, "topologies")
REPLAYS = ["hgx-h100-8.json", "hgx-h100-8-degraded.json", "hgx-h100-8-lost-gpu.json",
           "hgx-h100-8-fabric-in-progress.json", "hgx-h100-8-nvlink-down.json", "hgx-h100-8-no-driver.json",
           "dgx1-v100.json", "h200x2.json", "pcie-l40s-4.json", "mixed-gpus.json", "minor-numbers.json",
           os.path.join("..", "..", "examples", "gb200-nvl72-tray.json"),
           os.path.join("..", "..", "examples", "mi300x.json")]

report = Report()
check = report.check


def env():
    return clean_env({"DMACONN_QUIET": "1"})


def run(cli, *args, **kw):
    return subprocess.run([cli] + list(args), capture_output=True, text=True, env=kw.get("env") or env(),
                          timeout=120)


# ------------------------------------------------------- Kubernetes labels
# k8s.io/apimachinery/pkg/util/validation: IsQualifiedName (the key) and
# IsValidLabelValue (the value).
DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN = re.compile(r"^%s(\.%s)*$" % (DNS1123_LABEL, DNS1123_LABEL))
QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def label_problems(key, value):
    problems = []
    parts = key.split("/")
    if len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not DNS1123_SUBDOMAIN.match(prefix):
            problems.append("prefix %r is not a DNS-1123 subdomain of at most 253 characters" % prefix)
    elif len(parts) == 1:
        name = parts[0]
    else:
        return ["key %r has more than one '/'" % key]
    if not name or len(name) > 63 or not QUALIFIED_NAME.match(name):
        problems.append("name %r is not 1 to 63 characters of [A-Za-z0-9._-], alphanumeric at both ends" % name)
    if len(value) > 63 or not LABEL_VALUE.match(value):
        problems.append("value %r is not at most 63 characters of [A-Za-z0-9._-], alphanumeric at both ends"
                        % value)
    return problems


def nfd_labels(text, what):
    """{key: value} of a feature file, checking every line."""
    labels = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        if "=" not in line:
            value = "true"  # NFD's rule for a bare name
        problems = label_problems(key, value)
        check(not problems, "%s: %r is a valid label%s" % (what, line, "" if not problems else ": " + "; ".join(problems)))
        labels[key] = value
    return labels


# -------------------------------------------------------------- Prometheus
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def prom_samples(text):
    out = []
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        m = SAMPLE.match(line)
        if m is None:
            check(False, "prometheus sample line parses: %r" % line[:80])
            continue
        out.append((m.group(1), dict(LABEL.findall(m.group(3) or "")), float(m.group(4))))
    return out


def promtool(text, what):
    p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "%s: promtool check metrics passes%s" % (what, "" if p.returncode == 0 else
                                                                       ": " + (p.stdout + p.stderr).strip()))


def check_no_repeat(samples, name):
    """No pair has dmaconn_pair_links equal to its dmaconn_pair_connectivity."""
    conn = {tuple(sorted(l.items())): v for m, l, v in samples if m == "dmaconn_pair_connectivity"}
    same = [dict(k) for k, v in ((tuple(sorted(l.items())), v) for m, l, v in samples if m == "dmaconn_pair_links")
            if conn.get(k) == v]
    check(not same, "%s: no dmaconn_pair_links repeats its pair's dmaconn_pair_connectivity (%d do)" %
          (name, len(same)))


def check_prometheus(cli, replay, doc):
    p = run(cli, "--replay", replay, "--format", "prometheus")
    name = os.path.basename(replay)
    check(p.returncode == 0, "%s: --format prometheus exits 0 (%d)" % (name, p.returncode))
    promtool(p.stdout, name)
    samples = prom_samples(p.stdout)
    # A detection that could not run (no driver) exports no pair and dmaconn_up 0.
    ran = not any("assuming no DMA connectivity" in w for r in doc["results"] for w in r["warnings"])
    for r in doc["results"]:
        t, c, n = r["device_type"], r["connection_type"], len(r["devices"])
        got = [v for m, l, v in samples if m == "dmaconn_devices" and l == {"device_type": t, "connection": c}]
        check(got == [n], "%s: dmaconn_devices{%s/%s} = %d (%s)" % (name, t, c, n, got))
        full = int(n > 0 and all(r["matrix"][i][j] > 0 for i in range(n) for j in range(n) if i != j))
        got = [v for m, l, v in samples if m == "dmaconn_fully_connected" and l["connection"] == c and
               l["device_type"] == t]
        check(got == [full], "%s: dmaconn_fully_connected{%s/%s} = %d (%s)" % (name, t, c, full, got))
        if c != "verified":
            # Every pair's matrix entry; for nvlink that is the link count,
            # and no second series repeats it.
            pairs = {(int(l["from_index"]), int(l["to_index"])): (v, l) for m, l, v in samples
                     if m == "dmaconn_pair_connectivity" and l["device_type"] == t and l["connection"] == c}
            want = {(i, j): r["matrix"][i][j] for i in range(n) for j in range(n) if i != j and ran}
            check({k: v for k, (v, _) in pairs.items()} == want,
                  "%s: dmaconn_pair_connectivity{%s/%s} is the matrix of --json" % (name, t, c))
            ok = all(l["from_uuid"] == (r["devices"][i].get("uuid") or "") and
                     l["to_bus_id"] == r["devices"][j]["pci_bus_id"] for (i, j), (_, l) in pairs.items())
            check(ok, "%s: each pair is labelled with both devices' index, UUID and bus id" % name)
        if c == "nvlink":
            links = [l for m, l, v in samples if m == "dmaconn_pair_links" and l["device_type"] == t and
                     l["connection"] == c]
            check(links == [], "%s: no dmaconn_pair_links{%s/nvlink}: the connectivity is the link count (%d)"
                  % (name, t, len(links)))
    check_no_repeat(samples, name)
    up = [v for m, _, v in samples if m == "dmaconn_up"]
    check(up == [int(ran)], "%s: dmaconn_up %d" % (name, ran))


def check_nfd(cli, replay, doc):
    p = run(cli, "--replay", replay, "--format", "nfd")
    name = os.path.basename(replay)
    check(p.returncode == 0 and p.stdout, "%s: --format nfd exits 0 with labels" % name)
    labels = nfd_labels(p.stdout, name)
    pre = "feature.node.kubernetes.io/dmaconn-"
    for r in doc["results"]:
        t, c, n = r["device_type"], r["connection_type"], len(r["devices"])
        check(labels.get(pre + t + "-devices") == str(n), "%s: %s-devices=%d" % (name, t, n))
        full = n > 0 and all(r["matrix"][i][j] > 0 for i in range(n) for j in range(n) if i != j)
        if c != "verified":
            check(labels.get(pre + "%s-%s-fully-connected" % (t, c)) == ("true" if full else "false"),
                  "%s: %s-%s-fully-connected=%s" % (name, t, c, full))
        if (t, c) == ("cuda", "nvlink") and n > 1:
            links = min(r["matrix"][i][j] for i in range(n) for j in range(n) if i != j)
            check(labels.get(pre + "cuda-nvlink-links") == str(links), "%s: cuda-nvlink-links=%d" % (name, links))
    return labels


def slurmd_reads(lines, tmp, ngpus, gtype):
    """(status, [(index, type, links)]) as `slurmd -G` reads the gres.conf lines."""
    host = socket.gethostname().split(".")[0]
    conf = []
    for line in lines:
        m = re.search(r"File=/dev/nvidia(\d+)", line)
        if m:
            path = os.path.join(tmp, "nvidia" + m.group(1))
            if not os.path.exists(path):
                try:
                    os.mknod(path, 0o600 | 0o020000, os.makedev(1, 3))  # a character device, as /dev/null
                except PermissionError:
                    # Not root (`make test` as a user): a link to /dev/null is
                    # the same character device to slurmd's stat().
                    os.symlink("/dev/null", path)
            line = line.replace(m.group(0), "File=" + path)
        conf.append(line)
    with open(os.path.join(tmp, "gres.conf"), "w") as f:
        f.write("\n".join(conf) + "\n")
    with open(os.path.join(tmp, "slurm.conf"), "w") as f:
        f.write("ClusterName=dmaconn\nSlurmctldHost=localhost\nGresTypes=gpu\n"
                "NodeName=%s Gres=gpu%s:%d CPUs=1 State=UNKNOWN\nPartitionName=all Nodes=ALL Default=YES\n"
                % (host, ":" + gtype if gtype else "", ngpus))
    p = subprocess.run(["slurmd", "-G"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, SLURM_CONF=os.path.join(tmp, "slurm.conf")))
    got = []
    for line in (p.stdout + p.stderr).splitlines():
        m = re.search(r"Gres Name=gpu Type=(\S+) Count=1 Index=(\d+) .*File=\S+ Links=(\S+)", line)
        if m:
            got.append((int(m.group(2)), m.group(1), m.group(3)))
    return p.returncode, sorted(got), p.stdout + p.stderr


def check_slurm(cli, replay, doc):
    name = os.path.basename(replay)
    r = next((x for x in doc["results"] if (x["device_type"], x["connection_type"]) == ("cuda", "nvlink")), None)
    p = run(cli, "--replay", replay, "--format", "slurm")
    check(p.returncode == 0, "%s: --format slurm exits 0" % name)
    lines = [l for l in p.stdout.splitlines() if l and not l.startswith("#")]
    if r is None or not r["devices"]:
        check(not lines, "%s: no gres.conf line without NVIDIA GPUs" % name)
        return
    n = len(r["devices"])
    # /dev/nvidiaN: the minor number, else the NVML index; lines in that order.
    files = [d.get("minor_number", d.get("nvml_index", i)) for i, d in enumerate(r["devices"])]
    order = sorted(range(n), key=lambda i: files[i])
    want = [",".join("-1" if a == b else str(r["matrix"][i][order[b]]) for b in range(n))
            for a, i in enumerate(order)]
    check([l.split("Links=")[1] for l in lines] == want, "%s: Links= per GPU is the nvlink matrix row" % name)
    check([re.search(r"File=(\S+)", l).group(1) for l in lines] == ["/dev/nvidia%d" % files[i] for i in order],
          "%s: File=/dev/nvidiaN, N the minor number (else the NVML index), in that order" % name)
    unknown = sum("minor_number" not in d for d in r["devices"])
    said = "%d of %d GPUs have no known minor number" % (unknown, n)
    check((said in p.stdout and said in p.stderr) == (unknown > 0) and ("minor number" in p.stdout) == (unknown > 0),
          "%s: %s" % (name, said + ", said in a comment and a warning" if unknown else "every minor number known"))
    gtype = re.search(r"Type=(\S+)", lines[0])
    types = {re.search(r"Type=(\S+)", l).group(1) for l in lines if "Type=" in l}
    if len(types) > 1:
        return  # one Gres= count per type would be needed in slurm.conf: the Links check above suffices
    with tempfile.TemporaryDirectory() as tmp:
        status, got, out = slurmd_reads(lines, tmp, n, gtype.group(1) if gtype else "")
    check(status == 0 and [g[2] for g in got] == want and [g[0] for g in got] == sorted(files),
          "%s: slurmd -G reads %d GPUs back with these Links= (got %s)%s" % (
              name, n, [g[2] for g in got], "" if status == 0 and got else ": " + out.strip()[-400:]))


def check_slurm_refused(cli):
    """A minor number unknown where the NVML index is another GPU's: no file."""
    replay = os.path.join(TOPO, "minor-number-fails.json")
    p = run(cli, "--replay", replay, "--format", "slurm")
    check(p.returncode == 1 and p.stdout == "" and "two GPUs would get /dev/nvidia3" in p.stderr,
          "minor-number-fails.json: --format slurm refuses two GPUs on /dev/nvidia3 (exit %d, %r)"
          % (p.returncode, p.stderr.strip()[-300:]))


def check_slurm_node(cli):
    """gres.conf describes the node, as slurmd's own NVML autodetection does
    (it ignores CUDA_VISIBLE_DEVICES): every GPU of it whatever the variables
    that hide devices say, live or replayed; minor numbers with gaps
    (0, 2, 5, 7) kept as they are."""
    src = os.path.join(TOPO, "minor-numbers.json")
    full = run(cli, "--replay", src, "--format", "slurm")
    for var, value in (("CUDA_VISIBLE_DEVICES", "1,3"), ("CUDA_VISIBLE_DEVICES", "0"), ("CUDA_DEVICE_ORDER", "FASTEST_FIRST"),
                       ("CUDA_VISIBLE_DEVICES", "GPU-466681ad-8efd-d202-ce6f-4f277ed15ff0")):
        e = env()
        e[var] = value
        for args in ((), ("-d", "cuda", "-c", "nvlink")):
            p = run(cli, "--replay", src, "--format", "slurm", *args, env=e)
            check(p.returncode == 0 and p.stdout == full.stdout,
                  "slurm: %s=%s %s changes no line of the node's gres.conf (%r)" % (var, value, " ".join(args),
                                                                                     p.stdout))
    with tempfile.TemporaryDirectory() as tmp:
        doc = json.load(open(src))
        for d, m in zip(doc["nvml"]["devices"], (5, 0, 7, 2)):
            d["minor_number"] = m
        gaps = os.path.join(tmp, "gaps.json")
        json.dump(doc, open(gaps, "w"))
        p = run(cli, "--replay", gaps, "--format", "slurm")
        lines = [l for l in p.stdout.splitlines() if l and not l.startswith("#")]
        check(p.returncode == 0 and [re.search(r"File=(\S+)", l).group(1) for l in lines] ==
              ["/dev/nvidia%d" % m for m in (0, 2, 5, 7)] and "minor number" not in p.stdout + p.stderr,
              "slurm: minor numbers 5, 0, 7, 2 give /dev/nvidia0, 2, 5, 7 and no warning (%r)" % p.stdout)
        # Only some minor numbers known: where the index is free, it stands in, said once.
        del doc["nvml"]["devices"][1]["minor_number"]
        json.dump(doc, open(gaps, "w"))
        p = run(cli, "--replay", gaps, "--format", "slurm")
        lines = [l for l in p.stdout.splitlines() if l and not l.startswith("#")]
        check(p.returncode == 0 and [re.search(r"File=(\S+)", l).group(1) for l in lines] ==
              ["/dev/nvidia%d" % m for m in (1, 2, 5, 7)] and "1 of 4 GPUs have no known minor number" in p.stdout
              and "1 of 4 GPUs have no known minor number" in p.stderr,
              "slurm: one minor number unknown: /dev/nvidia1 (its index), said (%r)" % p.stdout)
        status, got, out = slurmd_reads(lines, tmp, 4, "rtx_a6000")
        check(status == 0 and [g[0] for g in got] == [1, 2, 5, 7],
              "slurm: slurmd -G reads /dev/nvidia1, 2, 5, 7 back (got %s)%s" % (got, "" if status == 0 else ": " + out[-300:]))
        # A GPU in MIG mode: its line is the whole GPU, with no link (its
        # instances have no peer DMA), and a comment says so.
        doc = json.load(open(src))
        doc["dmaconn_topology"] = 2
        doc["nvml"]["devices"][0]["mig_mode"] = [1, 1]
        doc["nvml"]["devices"][0]["mig_devices"] = [{"uuid": "MIG-11111111-2222-3333-4444-555555555555",
                                                     "gpu_instance_id": 1, "compute_instance_id": 0}]
        mig = os.path.join(tmp, "mig.json")
        json.dump(doc, open(mig, "w"))
        p = run(cli, "--replay", mig, "--format", "slurm")
        lines = [l for l in p.stdout.splitlines() if l and not l.startswith("#")]
        check(p.returncode == 0 and len(lines) == 4 and lines[1].endswith("File=/dev/nvidia1 Links=0,-1,0,0") and
              "# dmaconn: /dev/nvidia1 is in MIG mode" in p.stdout,
              "slurm: a GPU in MIG mode keeps its line, no link, and a comment says so (%r)" % p.stdout)
        status, got, out = slurmd_reads(p.stdout.splitlines(), tmp, 4, "rtx_a6000")
        check(status == 0 and [g[0] for g in got] == [0, 1, 2, 3],
              "slurm: slurmd -G reads the MIG node's 4 GPUs (got %s)%s" % (got, "" if status == 0 else ": " + out[-300:]))


def check_slurm_header(cli):
    """A replay path with a newline (or a carriage return) stays one comment line."""
    src = os.path.join(TOPO, "h200x2.json")
    for sep in ("\n", "\r", "\r\n"):
        with tempfile.TemporaryDirectory() as tmp:
            replay = os.path.join(tmp, "node%sName=gpu Type=forged File=/dev/nvidia1 Links=-1,0%s#" % (sep, sep), "x.json")
            os.makedirs(os.path.dirname(replay))
            shutil.copyfile(src, replay)
            p = run(cli, "--replay", replay, "--format", "slurm")
            lines = p.stdout.split("\n")
            comments = [l for l in lines if l.startswith("#")]
            gpus = [l for l in lines if l and not l.startswith("#")]
            check(p.returncode == 0 and lines[0].startswith("# dmaconn: 2 NVIDIA GPUs") and
                  not any(c in l for l in comments for c in "\r\t") and lines[-1] == "" and
                  len(comments) + len(gpus) + 1 == len(lines) and len(gpus) == 2 and
                  all(l.startswith("Name=gpu Type=h200 ") for l in gpus) and
                  not any("forged" in l for l in gpus),
                  "slurm: a replay path with %r gives one comment line and 2 GPU lines (%r)" % (sep, p.stdout))
            gres = [l for l in p.stdout.splitlines() if l and not l.startswith("#")]
            status, got, out = slurmd_reads(p.stdout.splitlines(), tmp, 2, "h200")
            check(status == 0 and len(gres) == 2 and [g[0] for g in got] == [0, 1],
                  "slurm: slurmd -G reads the 2 GPUs and nothing forged (got %s)%s" % (got, "" if status == 0
                                                                                      else ": " + out[-300:]))


# ------------------------------------------------------------------- NCCL
BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]$")
NCCL_CLASSES = ("0x060400", "0x068000", "0x068001", "0x03", "0x02", "0x030200", "0x030000")


def check_nccl_xml(cli, replay, doc):
    name = os.path.basename(replay)
    r = next((x for x in doc["results"] if (x["device_type"], x["connection_type"]) == ("cuda", "nvlink")), None)
    p = run(cli, "--replay", replay, "--format", "nccl-xml")
    if r is None:
        check(p.returncode == 1 and "needs the cuda/nvlink result" in p.stderr,
              "%s: --format nccl-xml without cuda/nvlink fails with a reason" % name)
        return
    check(p.returncode == 0, "%s: --format nccl-xml exits 0" % name)
    text = p.stdout
    # NCCL's reader: no declaration or processing instruction, every element
    # at most 16 attributes, names and values at most 255 characters.
    check(text.startswith("<system "), "%s: the document starts with <system> (NCCL reads no <?xml?>)" % name)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        check(False, "%s: nccl-xml parses as XML: %s" % (name, e))
        return
    check(root.tag == "system" and root.get("version") == "1", "%s: <system version=\"1\">" % name)
    ok = all(len(e.attrib) <= 16 and all(len(v) <= 255 for v in e.attrib.values()) for e in root.iter())
    check(ok, "%s: within NCCL's limits of 16 attributes and 255 characters" % name)
    gpus = {}
    for cpu in root:
        check(cpu.tag == "cpu" and re.match(r"^-?\d+$", cpu.get("numaid", "")),
              "%s: <cpu> with an integer numaid under <system>" % name)
        for pci in cpu:
            bus = pci.get("busid", "")
            check(pci.tag == "pci" and BDF.match(bus) and pci.get("class") in NCCL_CLASSES,
                  "%s: <pci busid=%r class=%r> as NCCL spells them" % (name, bus, pci.get("class")))
            dev = next((d for d in r["devices"] if d["pci_bus_id"] == bus), {}) if r else {}
            for gpu in pci:
                # dev and sm where NVML gave them (NCCL fills what is missing for its own GPU).
                want = {"dev": "nvml_index" in dev, "sm": bool(dev.get("compute_capability"))}
                check(gpu.tag == "gpu" and all(re.match(r"^\d+$", gpu.get(k, "")) if w else gpu.get(k) is None
                                               for k, w in want.items()),
                      "%s: <gpu> under <pci %s> with integer %s" % (name, bus, [k for k, w in want.items() if w]))
                links = {}
                for nvl in gpu:
                    check(nvl.tag == "nvlink" and re.match(r"^\d+$", nvl.get("count", "")) and
                          nvl.get("tclass") in ("0x068000", "0x030200") and nvl.get("target"),
                          "%s: <nvlink target count tclass> under <gpu> of %s" % (name, bus))
                    links[nvl.get("target")] = (int(nvl.get("count")), nvl.get("tclass"))
                gpus[bus] = (gpu, links)
    n = len(r["devices"])
    check(sorted(gpus) == sorted(d["pci_bus_id"] for d in r["devices"]), "%s: one <gpu> per GPU" % name)
    for i, d in enumerate(r["devices"]):
        gpu, links = gpus.get(d["pci_bus_id"], (None, {}))
        switch = d.get("nvlink_switch_links") or 0
        row = [r["matrix"][i][j] for j in range(n) if j != i]
        if switch and (any(row) or n == 1):
            want = {"ffffffff:ff:ff.0": (switch, "0x068000")}
        elif not switch:
            want = {r["devices"][j]["pci_bus_id"]: (r["matrix"][i][j], "0x030200") for j in range(n)
                    if j != i and r["matrix"][i][j] > 0}
        else:
            want = {}
        check(links == want, "%s: GPU %d's <nvlink>s are %s (%s)" % (name, i, want, links))


def check_nccl_numa(cli):
    """NUMA nodes from the recording's sysfs files ("files"), not this machine's /sys."""
    with open(os.path.join(TOPO, "hgx-h100-8.json")) as f:
        doc = json.load(f)
    buses = [d["pci"]["bus_id"][4:].lower() for d in doc["nvml"]["devices"]]
    nodes = [1, 0, 1, 0, 3, 3, None, 1]  # None: the kernel's -1, no NUMA node
    doc["files"] = {"/sys/bus/pci/devices/%s/numa_node" % b: "%d\n" % (-1 if n is None else n)
                    for b, n in zip(buses, nodes)}
    with tempfile.TemporaryDirectory() as tmp:
        replay = os.path.join(tmp, "numa.json")
        with open(replay, "w") as f:
            json.dump(doc, f)
        e = env()
        e["DMACONN_SYSFS_ROOT"] = os.path.join(tmp, "nothing")  # the replay's files, not a live tree
        p = run(cli, "--replay", replay, "--format", "nccl-xml", env=e)
        got = [(cpu.get("numaid"), [pci.get("busid") for pci in cpu]) for cpu in ET.fromstring(p.stdout)]
        want = [("1", [buses[0], buses[2], buses[7]]), ("0", [buses[1], buses[3]]), ("3", [buses[4], buses[5]]),
                ("-1", [buses[6]])]
        check(p.returncode == 0 and got == want, "nccl-xml: <cpu numaid> from the recording's numa_node files (%s)"
              % got)
        devs = json.loads(run(cli, "--replay", replay, "-d", "cuda", "-c", "nvlink", "--json", env=e).stdout)
        got = [d.get("numa_node") for d in devs["results"][0]["devices"]]
        check(got == nodes, "--json: numa_node per GPU as recorded, none for -1 (%s)" % got)


def check_mpi(cli, mpiexec):
    rank_sh = os.path.join(HERE, "mpi", "rank.sh")
    e = env()
    e.update({"DMACONN_TEST_REPLAY_0": os.path.join(HERE, "mpi", "topologies", "hgx-1.json"),
              "DMACONN_TEST_REPLAY_1": os.path.join(HERE, "mpi", "topologies", "hgx-2.json"),
              "OMPI_MCA_btl": "self,vader", "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
              "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_hwloc_base_binding_policy": "none",
              "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "ASAN_OPTIONS": "detect_leaks=0"})
    p = subprocess.run([mpiexec, "-np", "2", "sh", rank_sh, cli, "--mpi", "-d", "cuda", "-c", "nvlink",
                        "--format", "prometheus"], capture_output=True, text=True, env=e, timeout=300)
    check(p.returncode == 0, "mpi: --mpi --format prometheus exits 0 (%d: %s)" % (p.returncode, p.stderr[-300:]))
    check(p.stdout.count("# TYPE dmaconn_up gauge") == 1, "mpi: one document, from rank 0")
    promtool(p.stdout, "mpi")
    samples = prom_samples(p.stdout)
    check([v for m, _, v in samples if m == "dmaconn_devices"] == [4], "mpi: the job's 4 devices")
    hosts = {(l["from_rank"], l["from_host"]) for m, l, v in samples if m == "dmaconn_pair_connectivity"}
    check(hosts == {("0", "hgx-1"), ("1", "hgx-2")}, "mpi: pairs labelled with rank and host (%s)" % sorted(hosts))
    # A per-node format: each node's first rank writes its own node (here
    # both simulated nodes share this machine: local rank 1 stays silent).
    p = subprocess.run([mpiexec, "-np", "2", "sh", rank_sh, cli, "--mpi", "--format", "nfd"],
                       capture_output=True, text=True, env=e, timeout=300)
    labels = nfd_labels(p.stdout, "mpi nfd")
    check(p.returncode == 0 and p.stdout.count("dmaconn-cuda-devices=") == 1 and
          labels.get("feature.node.kubernetes.io/dmaconn-cuda-devices") == "2",
          "mpi: --format nfd: one document, local rank 0's node of 2 GPUs")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cli = os.path.join(sys.argv[1], "dmaconn")
    missing = [t for t in ("promtool", "slurmd") if not shutil.which(t)]
    if missing:
        sys.stderr.write("formats_test: %s missing (as root, with services kept from starting: apt-get install prometheus slurmd; .ci/run does)\n"
                         % " and ".join(missing))
        sys.exit(1 if os.environ.get("CI") else 77)
    for rel in REPLAYS:
        replay = os.path.normpath(os.path.join(TOPO, rel))
        doc = json.loads(run(cli, "--replay", replay, "--json").stdout)
        check_prometheus(cli, replay, doc)
        check_nfd(cli, replay, doc)
        check_slurm(cli, replay, doc)
        check_nccl_xml(cli, replay, doc)
    check_slurm_refused(cli)
    check_slurm_node(cli)
    # Values that say what went wrong.
    pre = "feature.node.kubernetes.io/dmaconn-cuda-"
    deg = nfd_labels(run(cli, "--replay", os.path.join(TOPO, "hgx-h100-8-degraded.json"), "--format", "nfd").stdout,
                     "degraded")
    check(deg.get(pre + "nvlink-links") == "16", "degraded: cuda-nvlink-links=16")
    fab = nfd_labels(run(cli, "--replay", os.path.join(TOPO, "hgx-h100-8-fabric-in-progress.json"), "--format",
                         "nfd").stdout, "fabric")
    check(fab.get(pre + "fabric-state") == "in_progress" and fab.get(pre + "nvlink-fully-connected") == "false",
          "fabric in progress: cuda-fabric-state=in_progress, nvlink not fully connected (%s)" % fab)
    tray = nfd_labels(run(cli, "--replay", os.path.join(REPO, "examples", "gb200-nvl72-tray.json"), "--format",
                          "nfd").stdout, "gb200")
    check(tray.get(pre + "fabric-clique") == "5e2a9c41-7b3d-4f60-a1e8-92c4d0b7f3a6.32766",
          "GB200 tray: cuda-fabric-clique is cluster_uuid.clique_id")
    check("fabric-clique" not in " ".join(run(cli, "--replay", os.path.join(TOPO, "hgx-h100-8.json"), "--format",
                                              "nfd").stdout.split()),
          "HGX (zero cluster UUID): no clique label")
    check_slurm_header(cli)
    check_nccl_numa(cli)
    # An XGMI link the kernel disables: connectivity 0, and the link it has.
    e = env()
    e["DMACONN_SYSFS_ROOT"] = os.path.join(HERE, "sysfs-kfd", "disabled-link")
    p = run(cli, "-d", "rocm", "-c", "infinity_fabric", "--format", "prometheus", env=e)
    promtool(p.stdout, "disabled XGMI link")
    samples = prom_samples(p.stdout)
    got = sorted((m, l["from_index"], l["to_index"], v) for m, l, v in samples if m.startswith("dmaconn_pair_"))
    check(got == [("dmaconn_pair_connectivity", "0", "1", 0), ("dmaconn_pair_connectivity", "1", "0", 0),
                  ("dmaconn_pair_links", "0", "1", 1), ("dmaconn_pair_links", "1", "0", 1)],
          "disabled XGMI link: connectivity 0 and dmaconn_pair_links 1 per direction (%s)" % got)
    bad = run(cli, "--replay", "/nonexistent.json", "--format", "prometheus")
    check(bad.returncode == 1 and "dmaconn_up 0" in bad.stdout, "a failed detection: exit 1 and dmaconn_up 0")
    promtool(bad.stdout, "failed detection")
    if len(sys.argv) > 2 and sys.argv[2]:
        check_mpi(cli, sys.argv[2])
    sys.exit(report.done())


if __name__ == "__main__":
    main()
