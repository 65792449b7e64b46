#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The node's CPUs in the placement (cpu_arch, cpu_vendor, cpu_family,
cpu_model) from the kernel's CPU modalias, and on --format nccl-xml's
<cpu> elements, for the modalias forms the kernel writes and for ones it
does not: each case replays a placement fixture whose
/sys/devices/system/cpu/modalias is replaced.

usage: placement_cpu_test.py BUILD_DIR   (from the source root)
"""
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Report, clean_env, cli_command, run  # noqa: E402

CLI = cli_command(sys.argv[1])
ENV = clean_env({"DMACONN_QUIET": "1", "DMACONN_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"})
BASE = json.load(open("tests/topologies-placement/dgx-h100.json"))
FEATURES = ":feature:,0000,0001,0002"
report = Report()

CASES = [
    # (name, modalias or None (no file), wanted node facts)
    ("sapphire-rapids", "cpu:type:x86,ven0000fam0006mod008F" + FEATURES,
     {"cpu_arch": "x86_64", "cpu_vendor": "GenuineIntel", "cpu_family": 6, "cpu_model": 143}),
    ("epyc-genoa", "cpu:type:x86,ven0002fam0019mod0011" + FEATURES,
     {"cpu_arch": "x86_64", "cpu_vendor": "AuthenticAMD", "cpu_family": 25, "cpu_model": 17}),
    ("zhaoxin", "cpu:type:x86,ven000Afam0007mod005B" + FEATURES,
     {"cpu_arch": "x86_64", "cpu_vendor": "  Shanghai  ", "cpu_family": 7, "cpu_model": 91}),
    ("hygon", "cpu:type:x86,ven0009fam0018mod0002" + FEATURES,
     {"cpu_arch": "x86_64", "cpu_vendor": "HygonGenuine", "cpu_family": 24, "cpu_model": 2}),
    ("vendor-unnamed", "cpu:type:x86,ven0004fam0006mod0001" + FEATURES,
     {"cpu_arch": "x86_64", "cpu_family": 6, "cpu_model": 1}),
    ("vendor-beyond", "cpu:type:x86,venFFFFfam0006mod0001" + FEATURES,
     {"cpu_arch": "x86_64", "cpu_family": 6, "cpu_model": 1}),
    ("x86-cut-short", "cpu:type:x86,ven0000fam00", {"cpu_arch": "x86_64"}),
    ("grace", "cpu:type:aarch64:feature:,0000,0001", {"cpu_arch": "arm64"}),
    ("no-prefix", "type:x86,ven0000fam0006mod008F" + FEATURES, {}),
    ("riscv", "cpu:type:riscv64:feature:,0000", {}),
    ("empty", "", {}),
    ("absent", None, {}),
    ("long", "cpu:type:x86,ven0000fam0006mod008F:feature:" + ",%04X" * 3000 % tuple(range(3000)),
     {"cpu_arch": "x86_64", "cpu_vendor": "GenuineIntel", "cpu_family": 6, "cpu_model": 143}),
]
KEYS = ("cpu_arch", "cpu_vendor", "cpu_family", "cpu_model")
ATTRS = {"cpu_arch": "arch", "cpu_vendor": "vendor", "cpu_family": "familyid", "cpu_model": "modelid"}

with tempfile.TemporaryDirectory(prefix="dmaconn-placement-cpu-") as tmp:
    for name, modalias, want in CASES:
        doc = json.loads(json.dumps(BASE))
        doc["files"].pop("/sys/devices/system/cpu/modalias", None)
        if modalias is not None:
            doc["files"]["/sys/devices/system/cpu/modalias"] = modalias + "\n"
        path = os.path.join(tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(doc, f)
        rc, out, err = run(CLI + ["--replay", path, "--nics", "--json"], ENV, timeout=120)
        node = json.loads(out)["placement"] if rc == 0 else {}
        got = {k: node[k] for k in KEYS if k in node}
        report.equal("%s: the node's CPU facts" % name, got, want)
        rc, out, err = run(CLI + ["--replay", path, "--format", "nccl-xml"], ENV, timeout=120)
        cpus = re.findall(rb"<cpu [^>]*>", out)
        attrs = {ATTRS[k]: str(v) for k, v in want.items()}
        if want.get("cpu_arch") != "x86_64":
            attrs = {k: v for k, v in attrs.items() if k == "arch"}
        ok = rc == 0 and len(cpus) == 2
        for c in cpus:
            have = dict(re.findall(r'(arch|vendor|familyid|modelid)="([^"]*)"', c.decode()))
            ok = ok and have == attrs
        report.check(ok, "%s: every <cpu> of nccl-xml carries %s" % (name, attrs), b"; ".join(cpus).decode())
sys.exit(report.done())
