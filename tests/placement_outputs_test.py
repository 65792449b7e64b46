#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Where to place work: --nics, --topo's NIC and affinity columns, --bind, and
the placement in --json, the Python binding and the formats, on replayed nodes.

usage: placement_outputs_test.py BUILD_DIR [--update]

For every replay of PLACEMENTS:
  - the whole output of `--nics`, `--topo -d cuda`, `--bind I` for each GPU
    and `--nics --json` against tests/placement-outputs/NAME-MODE.out (and .err):
    --update writes them (read every diff before committing one);
  - --nics --json and --bind --json validate against docs/dmaconn.schema.json
    (jsonschema); the Python binding's placement().as_dict() equals the CLI's
    "placement" (skipped when the library cannot be loaded in Python, as
    under a sanitizer);
  - facts that hold whatever the node: each GPU's NICs nearest first (by
    class, GPUDirect RDMA usable first, then name) and every NIC once; the
    Slurm mask is the cpuset's; numactl never binds to a memory-only node;
    --bind's lines are the JSON's numactl and slurm_cpu_bind;
  - --format prometheus passes `promtool check metrics`, and its placement
    series say what the JSON says (ranks, GDR, NICs per GPU);
  - --format nfd: every line a Kubernetes label, the closest NIC and GDR of
    each GPU as the JSON says;
  - --format nccl-xml: the elements NCCL's reader takes (src/graph/xml.cc:
    nic under pci, net with name and dev, c2c with count and bw), every NIC
    once, and, where the file nests devices below their PCIe switches, the
    class NCCL derives from that tree for each GPU and NIC (PIX: one switch
    in common below the CPU, PXB: more than one, PHB: only the CPU) is the
    pcie_path of --json.
promtool comes from Debian's prometheus package; without it the test fails
under CI=1 and is skipped (77) otherwise.
"""
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
GOLDEN = os.path.join(HERE, "placement-outputs")
SCHEMA = os.path.join(REPO, "docs", "dmaconn.schema.json")
CLEAN = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
         "ZE_AFFINITY_MASK", "ZE_FLAT_DEVICE_HIERARCHY", "DMACONN_REPLAY", "DMACONN_QUIET",
         "DMACONN_SYSFS_ROOT", "DMACONN_NVML_LIBRARY")

# NAME: the replay (relative to the source root).
PLACEMENTS = {}
PLACEMENT_DIR = os.path.join(HERE, "topologies-placement")
if os.path.isdir(PLACEMENT_DIR):
    for f in sorted(os.listdir(PLACEMENT_DIR)):
        if f.endswith(".json"):
            PLACEMENTS[f[:-5]] = os.path.join("tests", "topologies-placement", f)

CLASS_ORDER = ["PIX", "PXB", "C2C", "PHB", "NODE", "SYS"]

failures = []


def check(ok, what):
    print(("ok " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
    return ok


def env():
    e = {k: v for k, v in os.environ.items() if k not in CLEAN}
    # Hermetic: nothing of this machine's /sys or NVML reaches a replay.
    e["DMACONN_SYSFS_ROOT"] = os.path.join(HERE, "sysfs", "no-nvidia")
    e["DMACONN_NVML_LIBRARY"] = "/nonexistent/libnvidia-ml.so.1"
    return e


def run(cli, *args):
    return subprocess.run([cli] + list(args), capture_output=True, text=True, env=env(), timeout=120, cwd=REPO)


def golden(name, proc, update):
    """The whole stdout and stderr against NAME.out and NAME.err."""
    for ext, got in ((".out", proc.stdout), (".err", proc.stderr)):
        path = os.path.join(GOLDEN, name + ext)
        if update:
            os.makedirs(GOLDEN, exist_ok=True)
            if ext == ".err" and not got:
                if os.path.exists(path):
                    os.remove(path)
                continue
            with open(path, "w") as f:
                f.write(got)
            continue
        want = open(path).read() if os.path.exists(path) else ""
        if not check(got == want, "%s%s is the expected output" % (name, ext)):
            sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), got.splitlines(True), path, "got"))


# ------------------------------------------------------------------ facts


def cpulist(text):
    cpus = set()
    for part in (text or "").split(","):
        if part:
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def mask_cpus(mask):
    """The CPUs of Slurm's mask_cpu:0x... (one task: one hexadecimal mask)."""
    m = re.match(r"^mask_cpu:(0x)?([0-9a-fA-F]+)$", mask or "")
    if not m:
        return None
    value = int(m.group(2), 16)
    return {k for k in range(value.bit_length()) if value >> k & 1}


def check_facts(name, pl):
    nics = pl["nics"]
    for d in pl["devices"]:
        i = d["index"]
        order = [l["nic"] for l in d.get("nics", [])]
        check(sorted(order) == list(range(len(nics))), "%s: GPU %d lists every NIC once (%s)" % (name, i, order))
        keys = [(CLASS_ORDER.index(l["path"]) if l.get("path") in CLASS_ORDER else len(CLASS_ORDER),
                 l["gdr"] == "none", nics[l["nic"]]["name"]) for l in d.get("nics", [])]
        check(keys == sorted(keys), "%s: GPU %d's NICs are nearest first, usable first, then by name" % (name, i))
        for l in d.get("nics", []):
            check((l["gdr"] == "none") == ("reason" in l),
                  "%s: GPU %d / NIC %d: a reason exactly when gdr is none" % (name, i, l["nic"]))
            check((l["gdr"] == "peermem") == ("gdr_module" in l),
                  "%s: GPU %d / NIC %d: the module named exactly with peermem" % (name, i, l["nic"]))
        if "slurm_cpu_bind" in d:
            check(mask_cpus(d["slurm_cpu_bind"]) == cpulist(d.get("cpuset")),
                  "%s: GPU %d: the Slurm mask %s is its cpuset %s" % (name, i, d["slurm_cpu_bind"], d.get("cpuset")))
        if "numactl" in d and d.get("memory_mode") == "memory_only":
            nodes = re.findall(r"--(?:cpunodebind|membind|preferred)=(\S+)", d["numactl"])
            check(all(str(d["memory_numa_node"]) not in n.split(",") for n in nodes),
                  "%s: GPU %d: numactl (%s) never names its memory-only node %s" % (
                      name, i, d["numactl"], d["memory_numa_node"]))


def check_bind_lines(name, cli, replay, pl, update):
    for d in pl["devices"]:
        i = d["index"]
        p = run(cli, "--replay", replay, "--bind", str(i))
        golden("%s-bind%d" % (name, i), p, update)
        want = []
        if "numactl" in d:
            want.append("numactl " + d["numactl"])
        if "slurm_cpu_bind" in d:
            want.append("srun --cpu-bind=" + d["slurm_cpu_bind"])
        check(p.stdout.splitlines() == want and p.returncode == (0 if want else 1),
              "%s: --bind %d prints the JSON's numactl and srun lines (exit %d)" % (name, i, p.returncode))
        # The same device by its PCI bus id and by its UUID.
        for key in ("pci_bus_id", "uuid"):
            if d.get(key):
                q = run(cli, "--replay", replay, "--bind", d[key])
                check(q.stdout == p.stdout and q.returncode == p.returncode,
                      "%s: --bind %s names GPU %d" % (name, key, i))


# ----------------------------------------------------------------- schema


def validator():
    try:
        import jsonschema
    except ImportError:
        return None
    with open(SCHEMA) as f:
        schema = json.load(f)
    return jsonschema.Draft202012Validator(schema)


def check_schema(v, name, doc, what):
    if v is None:
        check(False, "jsonschema is there to validate %s (python3-jsonschema)" % what)
        return
    errors = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
    check(not errors, "%s: %s validates against the schema%s" % (
        name, what, "" if not errors else ": %s at %s" % (errors[0].message, list(errors[0].path))))


def check_python(build, name, replay, pl):
    """placement().as_dict() in a fresh interpreter is the CLI's "placement"."""
    t = pl["device_type"]
    code = ("import json, sys, warnings, dmaconn\n"
            "warnings.simplefilter('ignore')\n"
            "json.dump(dmaconn.placement(%r).as_dict(), sys.stdout)\n" % t)
    e = env()
    e.update({"PYTHONPATH": os.path.join(REPO, "python"), "DMACONN_REPLAY": os.path.join(REPO, replay),
              "DMACONN_LIBRARY": os.path.join(build, "libdmaconn.so.0")})
    if os.environ.get("DMACONN_JSON_SKIP_BINDING"):
        return
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=120)
    got = json.loads(p.stdout) if p.returncode == 0 and p.stdout else None
    check(got == pl, "%s: dmaconn.placement(%r).as_dict() is --nics --json's placement%s" % (
        name, t, "" if got is not None else ": " + p.stderr.strip()[-300:]))
    # Typed values: the closest usable NIC as the JSON's first usable one.
    code = ("import dmaconn, warnings\nwarnings.simplefilter('ignore')\np = dmaconn.placement(%r)\n" % t +
            "print([(d.index, d.cpu_numa_node, len(d.cpus), (d.closest_nic() or None) and d.closest_nic().nic.name)"
            " for d in p.devices])\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=120)
    want = [(d["index"], d.get("cpu_numa_node"), len(cpulist(d.get("cpuset"))),
             next((pl["nics"][l["nic"]]["name"] for l in d.get("nics", []) if l["gdr"] != "none"), None))
            for d in pl["devices"]]
    check(p.stdout.strip() == repr(want), "%s: typed DevicePlacement values (%s)" % (name, p.stdout.strip()[-200:]))


# ------------------------------------------------------------------ formats

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def check_prometheus(cli, name, replay, pl):
    p = run(cli, "--replay", replay, "--format", "prometheus")
    pr = subprocess.run(["promtool", "check", "metrics"], input=p.stdout, capture_output=True, text=True,
                        timeout=60)
    check(p.returncode == 0 and pr.returncode == 0, "%s: promtool check metrics passes%s" % (
        name, "" if pr.returncode == 0 else ": " + (pr.stdout + pr.stderr).strip()[-300:]))
    samples = []
    for line in p.stdout.splitlines():
        m = SAMPLE.match(line) if line and not line.startswith("#") else None
        if m:
            samples.append((m.group(1), dict(LABEL.findall(m.group(3) or "")), float(m.group(4))))
    nics = pl["nics"]
    got = [(l.get("reason"), v) for m, l, v in samples if m == "dmaconn_rdma_nics"]
    check(got == [(pl.get("nics_reason") if not nics else None, len(nics))],
          "%s: dmaconn_rdma_nics %d%s (%s)" % (name, len(nics), "" if nics else " with its reason", got))
    rank = {(l["gpu_index"], l["nic"]): (v, l["path"]) for m, l, v in samples if m == "dmaconn_gpu_nic_rank"}
    gdr = {(l["gpu_index"], l["nic"]): (v, l["mechanism"], l.get("reason")) for m, l, v in samples
           if m == "dmaconn_gpu_nic_gdr"}
    count = {l["gpu_index"]: v for m, l, v in samples if m == "dmaconn_gpu_gdr_nics"}
    want_rank, want_gdr, want_count = {}, {}, {}
    for d in pl["devices"] if nics else []:
        g = str(d["index"])
        for r, l in enumerate(d["nics"]):
            key = (g, nics[l["nic"]]["name"])
            want_rank[key] = (r, l.get("path", ""))
            want_gdr[key] = (int(l["gdr"] != "none"), l["gdr"], l.get("reason"))
        want_count[g] = sum(l["gdr"] != "none" for l in d["nics"])
    check(rank == want_rank, "%s: dmaconn_gpu_nic_rank is each GPU's NIC order and path" % name)
    check(gdr == want_gdr, "%s: dmaconn_gpu_nic_gdr is each pair's gdr and reason" % name)
    check(count == want_count, "%s: dmaconn_gpu_gdr_nics counts each GPU's usable NICs (%s)" % (name, count))


def check_nfd(cli, name, replay, pl):
    p = run(cli, "--replay", replay, "--format", "nfd")
    labels = {}
    for line in p.stdout.splitlines():
        key, _, value = line.partition("=")
        prefix, _, lname = key.partition("/")
        check(prefix == "feature.node.kubernetes.io" and len(lname) <= 63 and QUALIFIED_NAME.match(lname)
              and len(value) <= 63 and LABEL_VALUE.match(value), "%s: nfd %r is a valid label" % (name, line))
        labels[lname] = value
    nics = pl["nics"]
    pre = "dmaconn-cuda-"
    check(labels.get(pre + "rdma-nics") == str(len(nics)), "%s: %srdma-nics=%d" % (name, pre, len(nics)))
    for d in pl["devices"] if nics else []:
        first = d["nics"][0]
        want = {"gpu%d-nic" % d["index"]: nics[first["nic"]]["name"],
                "gpu%d-nic-path" % d["index"]: first.get("path"), "gpu%d-gdr" % d["index"]: first["gdr"]}
        got = {k: labels.get(pre + k) for k in want}
        check(got == want, "%s: GPU %d's closest NIC labels %s" % (name, d["index"], got))
    if nics:
        usable = sum(any(l["gdr"] != "none" for l in d["nics"]) for d in pl["devices"])
        check(labels.get(pre + "gdr-gpus") == str(usable), "%s: %sgdr-gpus=%d" % (name, pre, usable))


def nccl_class(a, b):
    """The class NCCL gives the path between two endpoints of the tree (each
    the list of its elements from the CPU down to its own <pci>), as
    src/graph/paths.cc does: PHB through the CPU, PXB where the path goes
    from one PCI switch to another, else PIX (one switch); SYS across CPUs."""
    if a[0] is not b[0]:
        return "SYS"
    common = 0
    while common < min(len(a), len(b)) - 1 and a[common] is b[common]:
        common += 1
    if common == 1:
        return "PHB"
    # Switches on the path: the common one and those below it on each side.
    below = (len(a) - 1 - common) + (len(b) - 1 - common)
    return "PIX" if below == 0 else "PXB"


def check_nccl_xml(cli, name, replay, pl, gpus):
    p = run(cli, "--replay", replay, "--format", "nccl-xml")
    try:
        root = ET.fromstring(p.stdout)
    except ET.ParseError as e:
        check(False, "%s: nccl-xml parses: %s" % (name, e))
        return
    check(root.tag == "system" and root.get("version") == "1", "%s: <system version=1>" % name)
    ends, parents = {}, {}

    def walk(node, chain):
        for sub in node:
            parents[sub] = node
            if sub.tag == "pci":
                cls = sub.get("class", "")
                kids = [k.tag for k in sub]
                if cls.startswith("0x0604"):
                    check(kids and all(k == "pci" for k in kids), "%s: a bridge <pci %s> holds pci elements"
                          % (name, sub.get("busid")))
                    walk(sub, chain + [sub])
                elif "nic" in kids:
                    check(cls.startswith("0x02") and kids == ["nic"], "%s: <pci %s class %s> of a NIC"
                          % (name, sub.get("busid"), cls))
                    nets = [n for nic in sub for n in nic]
                    check(len(nets) == 1 and nets[0].tag == "net" and re.match(r"^\d+$", nets[0].get("dev", ""))
                          and nets[0].get("name") and "gdr" not in nets[0].attrib,
                          "%s: <nic><net name dev/></nic> without gdr (NCCL's own check decides)" % name)
                    for n in nets:
                        ends[("nic", n.get("name"))] = chain + [sub]
                else:
                    for g in sub:
                        check(g.tag == "gpu", "%s: <gpu> under <pci %s>" % (name, sub.get("busid")))
                        for c in g:
                            check(c.tag in ("nvlink", "c2c"), "%s: <%s> under <gpu>" % (name, c.tag))
                            if c.tag == "c2c":
                                check(re.match(r"^\d+$", c.get("count", "")) and re.match(r"^\d+$", c.get("bw", "")),
                                      "%s: <c2c count bw> integers" % name)
                    ends[("gpu", sub.get("busid"))] = chain + [sub]
            elif sub.tag == "cpu":
                # NCCL's ncclTopoAddCpu: arch on every <cpu>, vendor on x86,
                # familyid and modelid on Intel (and Zhaoxin), as the node says.
                want = {"arch": pl.get("cpu_arch")}
                if pl.get("cpu_arch") == "x86_64":
                    want.update(vendor=pl.get("cpu_vendor"), familyid=pl.get("cpu_family"),
                                modelid=pl.get("cpu_model"))
                want = {k: str(v) for k, v in want.items() if v is not None}
                got = {k: sub.get(k) for k in ("arch", "vendor", "familyid", "modelid") if sub.get(k) is not None}
                check(got == want, "%s: <cpu numaid=%s> says the node's CPUs as NCCL needs: %s (%s)"
                      % (name, sub.get("numaid"), got, want))
                walk(sub, [sub])

    walk(root, [])
    nics = pl["nics"]
    in_file = sorted(k[1] for k in ends if k[0] == "nic")
    nested = any(len(v) > 2 for v in ends.values())
    if in_file:
        want = sorted(n["name"] for n in nics if n.get("pci_bus_id"))
        check(in_file == want, "%s: every NIC with a PCI function once in the file (%s)" % (name, in_file))
    for d in pl["devices"]:
        c2c = [c for k, v in ends.items() if k == ("gpu", d.get("pci_bus_id", "").lower()) for c in v[-1].iter("c2c")]
        want = [(d["c2c_links"], d["c2c_max_bw_mbs"])] if d.get("c2c_status") == "active" and d.get("c2c_links") else []
        check([(int(c.get("count")), int(c.get("bw"))) for c in c2c] == want,
              "%s: GPU %d's <c2c> is %s" % (name, d["index"], want))
        if not in_file or not nested:
            continue
        for l in d["nics"]:
            a = ends.get(("gpu", d.get("pci_bus_id", "").lower()))
            b = ends.get(("nic", nics[l["nic"]]["name"]))
            want = l.get("pcie_path")
            got = nccl_class(a, b) if a and b else None
            # NODE and SYS both read as different host bridges or CPUs to NCCL.
            same = got == want or (want == "NODE" and got == "PHB")
            check(same, "%s: NCCL's class of GPU %d to %s from the file's tree is %s (%s)"
                  % (name, d["index"], nics[l["nic"]]["name"], want, got))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = os.path.abspath(sys.argv[1])
    update = "--update" in sys.argv[2:]
    cli = os.path.join(build, "dmaconn")
    if not shutil.which("promtool"):
        sys.stderr.write("placement_outputs_test: promtool missing (apt-get install prometheus)\n")
        sys.exit(1 if os.environ.get("CI") else 77)
    if not check(len(PLACEMENTS) >= 5, "replays of nodes with NICs are there (%d)" % len(PLACEMENTS)):
        sys.exit(1)
    v = validator()
    for name, replay in PLACEMENTS.items():
        golden(name + "-nics", run(cli, "--replay", replay, "--nics"), update)
        p = run(cli, "--replay", replay, "--nics", "--json")
        t = json.loads(p.stdout).get("placement", {}).get("device_type", "cuda")
        golden(name + "-topo", run(cli, "--replay", replay, "--topo", "-d", t), update)
        golden(name + "-nics-json", p, update)
        doc = json.loads(p.stdout)
        check_schema(v, name, doc, "--nics --json")
        pl = doc.get("placement")
        if not check(pl is not None and p.returncode == 0, "%s: --nics --json has a placement" % name):
            continue
        b = run(cli, "--replay", replay, "--bind", "0", "--json")
        check_schema(v, name, json.loads(b.stdout), "--bind 0 --json")
        check_facts(name, pl)
        check_bind_lines(name, cli, replay, pl, update)
        check_python(build, name, replay, pl)
        if t != "cuda":
            continue  # the formats describe the NVIDIA GPUs' NICs
        check_prometheus(cli, name, replay, pl)
        check_nfd(cli, name, replay, pl)
        check_nccl_xml(cli, name, replay, pl, None)
    # Usage: --bind needs a device that exists; --nics takes no -c.
    first = next(iter(PLACEMENTS.values()))
    p = run(cli, "--replay", first, "--bind", "99")
    check(p.returncode == 1 and "no such cuda device" in p.stderr and not p.stdout,
          "--bind 99: no such device, exit 1 (%r)" % p.stderr)
    p = run(cli, "--replay", first, "--nics", "-d", "cuda", "-c", "nvlink")
    check(p.returncode == 2 and "--nics takes -d" in p.stderr, "--nics -c: a usage error (%r)" % p.stderr)
    if update:
        print("placement_outputs_test: expected outputs written under tests/placement-outputs/")
    print("placement_outputs_test: %d failure(s)" % len(failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
