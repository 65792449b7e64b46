#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The ``dmaconn`` console script and ``python -m dmaconn`` of a package
installed without the C program (a wheel built without Jansson) say in one
line what is missing and exit non-zero: they never run themselves again.

A virtual environment's layout is made by hand, as pip makes it:
<prefix>/lib/pythonX.Y/site-packages/dmaconn (no bin/ inside) and the console
script <prefix>/bin/dmaconn.  Each start of the script adds a line to a file;
one start is the only right answer (a timeout stops a loop, and the count,
not the time, decides).

Usage: console_script_test.py SOURCE_DIR"""

import os
import shutil
import subprocess
import sys
import tempfile

from harness import Report

src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
report = Report()
check = report.check


with tempfile.TemporaryDirectory() as prefix:
    site = os.path.join(prefix, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
    shutil.copytree(os.path.join(src, "python", "dmaconn"), os.path.join(site, "dmaconn"),
                    ignore=shutil.ignore_patterns("bin", "lib", "libexec", "__pycache__"))
    starts = os.path.join(prefix, "starts")
    script = os.path.join(prefix, "bin", "dmaconn")
    os.makedirs(os.path.dirname(script))
    with open(script, "w") as f:
        f.write("#!%s\n" % sys.executable
                + "import sys\n"
                + "open(%r, 'a').write('start\\n')\n" % starts
                + "sys.path.insert(0, %r)\n" % site
                + "from dmaconn.__main__ import main\n"
                + "sys.exit(main())\n")
    os.chmod(script, 0o755)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONDONTWRITEBYTECODE": "1"}
    for name, argv, env_extra in (
        ("the console script", [script, "--version"], {}),
        ("python -m dmaconn", [sys.executable, "-m", "dmaconn", "--version"], {"PYTHONPATH": site}),
    ):
        if os.path.exists(starts):
            os.unlink(starts)
        try:
            p = subprocess.run(argv, env=dict(env, **env_extra), cwd=prefix, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            rc, err = None, (e.stderr or b"").decode(errors="replace")
        n = open(starts).read().count("start") if os.path.exists(starts) else 0
        expected_starts = 1 if name == "the console script" else 0
        check(n == expected_starts, "%s: the console script started %d time(s), expected %d"
              % (name, n, expected_starts))
        check(rc is not None and rc != 0, "%s: exits non-zero (status %s)" % (name, rc))
        lines = err.splitlines()
        check(len(lines) == 1 and "the dmaconn program is not installed" in err and "bin/dmaconn" in err,
              "%s: one line naming what is missing: %r" % (name, err[:300]))

    # A broken program in the package (a truncated or foreign ELF file, which
    # the kernel refuses to run): one line naming it and why, no traceback.
    bin_dir = os.path.join(site, "dmaconn", "bin")
    os.makedirs(bin_dir)
    with open(os.path.join(bin_dir, "dmaconn"), "wb") as f:
        f.write(b"\x7fELF" + b"\0" * 60)
    os.chmod(os.path.join(bin_dir, "dmaconn"), 0o755)
    for name, argv, env_extra in (
        ("the console script", [script, "--version"], {}),
        ("python -m dmaconn", [sys.executable, "-m", "dmaconn", "--version"], {"PYTHONPATH": site}),
    ):
        p = subprocess.run(argv, env=dict(env, **env_extra), cwd=prefix, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
        lines = p.stderr.splitlines()
        check(p.returncode not in (0, None), "%s, broken program: exits non-zero (status %s)"
              % (name, p.returncode))
        check(len(lines) == 1 and "bin/dmaconn" in p.stderr and "Traceback" not in p.stderr,
              "%s, broken program: one line naming it: %r" % (name, p.stderr[:300]))
sys.exit(report.done())
