#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The man pages and shell completions against the program they describe.

usage: docs_test.py BUILD_DIR   (run from the source root)

Every long option of `dmaconn --help` is in dmaconn(1) and in both
completions, and they name no other; groff renders both pages without a
warning; the bash completion completes options and the detectors' connection
types as the built program lists them.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

failures = []


def check(ok, what):
    print(("ok " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def main(build):
    build = Path(build)
    cli = str(build / "dmaconn")
    help_text = subprocess.run([cli, "--help"], capture_output=True, text=True, check=True).stdout
    options = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", help_text))
    check(len(options) >= 14, f"--help lists {len(options)} long options")

    page1 = (build / "man" / "dmaconn.1").read_text()
    page3 = (build / "man" / "libdmaconn.3").read_text()
    missing = sorted(o for o in options if o.replace("-", "\\-") not in page1)
    check(not missing, f"dmaconn(1) documents every option (missing: {missing})")
    check(".TH LIBDMACONN 3" in page3 and "dmaconn_detect" in page3, "libdmaconn(3) is a section 3 page")
    for page in (page1, page3):
        check("DMACONN_REPLAY" in page, "both pages carry the shared ENVIRONMENT section")

    bash = Path("tools/completion/dmaconn.bash").read_text()
    zsh = Path("tools/completion/_dmaconn").read_text()
    for name, text in (("bash", bash), ("zsh", zsh)):
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text))
        check(named == options, f"{name} completion names the options of --help ({sorted(named ^ options)})")

    if shutil.which("groff"):
        for page in ("dmaconn.1", "libdmaconn.3"):
            proc = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(build / "man" / page)],
                                  capture_output=True, text=True)
            check(proc.returncode == 0 and not proc.stderr, f"groff renders {page} cleanly {proc.stderr!r}")

    if shutil.which("bash"):
        def complete(*words):
            script = (
                "source tools/completion/dmaconn.bash\n"
                f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
                "_dmaconn; printf '%s\\n' \"${COMPREPLY[@]}\"\n"
            )
            out = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
            return out.stdout.split()

        check(complete(cli, "--rep") == ["--replay"], "bash completes --rep to --replay")
        check(complete(cli, "-d", "") == ["cuda", "rocm", "xpu"], "bash completes device types")
        listed = subprocess.run([cli, "--list"], capture_output=True, text=True, check=True).stdout
        rocm = sorted(line.split()[1] for line in listed.splitlines() if line.startswith("rocm "))
        check(sorted(complete(cli, "-d", "rocm", "-c", "")) == rocm,
              f"bash completes rocm's connections from --list ({rocm})")
    if shutil.which("zsh"):
        proc = subprocess.run(["zsh", "-n", "tools/completion/_dmaconn"], capture_output=True, text=True)
        check(proc.returncode == 0, f"zsh parses its completion {proc.stderr!r}")

    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
