#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""--topo says each warning once: the placement, which reads the vendor's
first view, must not say again under that view's name what the shown
connection's warnings said (a fabric still registering, MIG mode, no
NVML, ...).  Every replay of tests/topologies*/ and examples/, --topo for
each device type: no two warning lines on stderr that differ only in their
"type/connection: " label, and every warning of the shown result is said.

usage: topo_warnings_test.py BUILD_DIR   (from the source root)
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Report, clean_env, cli_command, run  # noqa: E402

CLI = cli_command(sys.argv[1])
ENV = clean_env({"DMACONN_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1",
                 "DMACONN_SYSFS_ROOT": "tests/sysfs/no-nvidia"})
report = Report(quiet=True)
LABEL = re.compile(r"^dmaconn: warning: [a-z]+/[a-z0-9_]+: ")
files = sorted(glob.glob("tests/topologies*/*.json") + glob.glob("examples/*.json"))
checked = repeated = 0
for f in files:
    if f.endswith("cases.json"):
        continue
    for t in ("cuda", "rocm", "xpu"):
        rc, out, err = run(CLI + ["--replay", f, "--topo", "-d", t], ENV, timeout=120)
        lines = [l for l in err.decode(errors="replace").splitlines() if l.startswith("dmaconn: warning: ")]
        texts = [LABEL.sub("", l) for l in lines]
        dup = sorted({x for x in texts if texts.count(x) > 1})
        checked += 1
        repeated += bool(dup)
        report.check(not dup, "%s --topo -d %s: each warning once" % (f, t), "; ".join(dup)[:300])
print("%d runs, %d with a warning said twice" % (checked, repeated))
sys.exit(report.done())
