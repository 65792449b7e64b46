#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""tests/compare_cli.py itself, on a replay file with injected faults
(topologies/count-fail.json: nvmlDeviceGetCount_v2 fails):

  - this build against itself, each side with the fault stand-in
    (--old-stand-in for the old side): no difference, exit status 0;
  - the same without --old-stand-in: the old side ignores the faults that
    the new side applies, so runs differ (exit status 1): why the option is
    needed for an old build that already had the stand-in (d497775 on);
  - a real difference is found: an "old" CLI that exits 3 on --topo.

Usage: compare_cli_test.py BUILD_DIR   (run from the source root)
"""
import os
import re
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Report  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
CLI = os.path.join(BUILD, "dmaconn")
STAND_IN = os.path.join(BUILD, "tests", "libdmaconn_replay_faults.so")
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare_cli.py")
FILE = "tests/topologies/count-fail.json"
report = Report()


def compare(old, *extra):
    p = subprocess.run([sys.executable, SCRIPT, old, CLI, STAND_IN] + list(extra) + ["--files", FILE],
                       capture_output=True, text=True, timeout=600)
    m = re.search(r"^(\d+) runs, (\d+) differ$", p.stdout, re.M)
    return p.returncode, (int(m.group(1)), int(m.group(2))) if m else None, p.stdout + p.stderr


rc, counts, out = compare(CLI, "--old-stand-in", STAND_IN)
report.check(rc == 0 and counts is not None and counts[0] > 0 and counts[1] == 0,
             "both sides with the stand-in: no difference", "exit %s, %s\n%s" % (rc, counts, out[-2000:]))

rc, counts, out = compare(CLI)
report.check(rc == 1 and counts is not None and counts[1] > 0,
             "the old side without the stand-in ignores the faults: runs differ", "exit %s, %s" % (rc, counts))

with tempfile.TemporaryDirectory() as tmp:
    odd = os.path.join(tmp, "dmaconn")
    with open(odd, "w") as f:
        f.write('#!/bin/sh\nfor a in "$@"; do [ "$a" = --topo ] && exit 3; done\nexec "%s" "$@"\n' % CLI)
    os.chmod(odd, stat.S_IRWXU)
    rc, counts, out = compare(odd, "--old-stand-in", STAND_IN)
    topo_runs = len(re.findall(r"^DIFF .* --topo .*: exit", out, re.M))
    report.check(rc == 1 and counts is not None and counts[1] == topo_runs == 9,
                 "an old CLI that exits 3 on --topo: its 9 --topo runs differ, in exit status", out[-2000:])

sys.exit(report.done())
