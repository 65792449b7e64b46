#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Assembles the --verify helper's embedded PTX for every GPU ptxas knows.

Usage: ptx_check.py src/backends/cuda_verify/verify_helper.c

The kernel is a C string (kernel_ptx[]) that the CUDA driver JIT-compiles on
the user's GPU; a typo in it would fail only there.  Here ptxas (PATH,
$CUDA_HOME/bin or /usr/local/cuda/bin) assembles it for sm_75 and every
newer real architecture its --help lists.  Exit 77 (skipped, with the
reason) where there is no ptxas.
"""

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from harness import finish  # noqa: E402

SKIP = 77
OLDEST = 75  # CUDA 13's ptxas no longer targets sm_52 to sm_72


def find_ptxas():
    found = os.environ.get("PTXAS") or shutil.which("ptxas")
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if not found and home and os.access(os.path.join(home, "bin", "ptxas"), os.X_OK):
            found = os.path.join(home, "bin", "ptxas")
    return found


def kernel_ptx(source):
    with open(source) as f:
        text = f.read()
    m = re.search(r'kernel_ptx\[\]\s*=\s*((?:\s*"(?:[^"\\]|\\.)*")+)\s*;', text)
    if not m:
        raise SystemExit("FAIL: no kernel_ptx[] string in %s" % source)
    # C and Python agree on the escapes the string uses (\n, \t, \").
    return "".join(ast.literal_eval('"%s"' % c) for c in re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1)))


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    ptxas = find_ptxas()
    if not ptxas:
        print("skipped: no ptxas (the CUDA toolkit) on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin")
        return SKIP
    ptx = kernel_ptx(argv[1])
    help_text = subprocess.run([ptxas, "--help"], capture_output=True, text=True).stdout
    archs = sorted({int(n) for n in re.findall(r"'sm_(\d+)'", help_text) if int(n) >= OLDEST})
    if not archs:
        print("FAIL: %s --help lists no real architecture from sm_%d on" % (ptxas, OLDEST))
        return 1
    failed = []
    with tempfile.TemporaryDirectory(prefix="dmaconn-ptx-") as tmp:
        src = os.path.join(tmp, "kernel.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        for a in archs:
            p = subprocess.run([ptxas, "-arch=sm_%d" % a, src, "-o", os.path.join(tmp, "k.cubin")],
                               capture_output=True, text=True)
            if p.returncode != 0:
                failed.append("sm_%d: %s" % (a, (p.stdout + p.stderr).strip()))
    version = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return finish(failed, "verify helper PTX: assembled by %s (%s) for %s" % (
        ptxas, version[-1] if version else "?", " ".join("sm_%d" % a for a in archs)))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
