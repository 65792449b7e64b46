#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The man pages and shell completions against the program they describe.

usage: docs_test.py BUILD_DIR   (run from the source root)

Every long option of `dmaconn --help` is in dmaconn(1) and in both
completions, and they name no other; groff renders both pages without a
warning; the bash completion completes options and the detectors' connection
types as the built program lists them.
"""

import difflib
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


def readme_agrees(cli):
    """README.md against the code it describes."""
    readme = Path("README.md").read_text()
    # Every file or directory of the repository it names exists (NAME-like
    # placeholders aside).
    paths = set(re.findall(r"`((?:src|tools|tests|docs|examples|replay|python|bench|fuzz|include|man)/[^`\s]*)`",
                           readme))
    missing = sorted(p for p in paths if not re.search(r"[A-Z]{3,}", p) and not Path(p.rstrip("/")).exists())
    check(not missing, f"README.md names only existing paths (missing: {missing})")
    # The one table of the backends is where it says.
    table = re.search(r"listed\s+in\s+one\s+table,?\s+(?:in\s+)?`([^`]+)`", readme)
    check(table is not None and Path(table.group(1)).is_file()
          and "dc_backends[] =" in Path(table.group(1)).read_text(),
          f"README.md names the file that lists the backends ({table and table.group(1)})")
    # The files a bare run reads to tell whose driver is loaded.
    cli_c = Path("tools/cli.c").read_text()
    loaded = cli_c[cli_c.index("static int cli_driver_loaded("):]
    loaded = loaded[:loaded.index("\n}\n")]
    driver_paths = re.findall(r'"(/[^"]+)"', loaded) + ["/sys/class/drm"]
    man = Path("man/dmaconn.txt").read_text()
    bare = re.search(r"^A bare `dmaconn` runs.*?\n\n", readme, re.M | re.S)
    bare = bare.group(0) if bare else ""
    for where, text in (("README.md's bare run", bare), ("man/dmaconn.txt", man)):
        absent = [p for p in driver_paths if p not in text]
        check(not absent, f"{where} names every file a bare run reads for a driver (missing: {absent})")
    # The --topo example is what --topo prints for the same node (its
    # recording), legends included.
    block = re.search(r"^\$ build/dmaconn --topo\n(.*?)^```", readme, re.M | re.S)
    rec = "examples/h200x2-recorded.json"
    out = subprocess.run([cli, "--topo", "--replay", rec], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"}).stdout.replace(f" (replay of {rec})", "")
    check(block is not None and block.group(1) == out,
          "README.md's --topo example is what --topo prints for " + rec)
    if block is not None and block.group(1) != out:
        print("".join(difflib.unified_diff(block.group(1).splitlines(True), out.splitlines(True),
                                           "README.md", "dmaconn --topo")))


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
    # And the other way round, with `dmaconn check --help` and the short
    # names: the page names no option the program lacks, every option of
    # check's --help, each short name beside its long one, every format.
    shown1 = re.sub(r"\\f[BIRP]|\\f\(..|\\&", "", page1).replace("\\-", "-")
    check_help = subprocess.run([cli, "check", "--help"], capture_output=True, text=True, check=True).stdout
    check_options = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*[a-z]", check_help))
    on_page = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*[a-z]", shown1))
    check(on_page <= options | check_options,
          f"dmaconn(1) names no option --help lacks ({sorted(on_page - options - check_options)})")
    check(check_options <= on_page, f"dmaconn(1) documents every option of check --help "
          f"({sorted(check_options - on_page)})")
    pairs = re.findall(r"^\s+(-[A-Za-z]), (--[a-z][a-z-]*)", help_text + check_help, re.M)
    check(len(pairs) >= 10 and all(f"{short}, {long}" in shown1 for short, long in pairs),
          f"dmaconn(1) names each short option beside its long one "
          f"({[p for p in pairs if ', '.join(p) not in shown1]})")
    formats = subprocess.run([cli, "--format", "help"], capture_output=True, text=True, check=True).stdout
    names = [line.split()[0] for line in formats.splitlines() if line.strip()]
    check(len(names) >= 7 and all(re.search(rf"^- \*?{re.escape(n)}\b|\*{re.escape(n)}\*", Path("man/dmaconn.txt")
                                                .read_text(), re.M) for n in names),
          f"dmaconn(1) describes every format of --format help ({names})")
    check(".TH LIBDMACONN 3" in page3 and "dmaconn_detect" in page3, "libdmaconn(3) is a section 3 page")
    for page in (page1, page3):
        check("DMACONN_REPLAY" in page, "both pages carry the shared ENVIRONMENT section")

    bash = Path("tools/completion/dmaconn.bash").read_text()
    zsh = Path("tools/completion/_dmaconn").read_text()
    for name, text in (("bash", bash), ("zsh", zsh)):
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text))
        check(named == options, f"{name} completion names the options of --help ({sorted(named ^ options)})")

    for page, text in (("dmaconn.1", page1), ("libdmaconn.3", page3)):
        check(re.search(r"^\.SH FILES$", text, re.M) is not None, f"{page} has a FILES section")
    if shutil.which("groff"):
        for page in ("dmaconn.1", "libdmaconn.3"):
            proc = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(build / "man" / page)],
                                  capture_output=True, text=True)
            check(proc.returncode == 0 and not proc.stderr, f"groff renders {page} cleanly {proc.stderr!r}")
            # Markup left over as text: an _italic_ span that did not close
            # where it should ("-np k_ dmaconn ... [-d _type").
            shown = subprocess.run(["groff", "-man", "-Tascii", "-P-cbou", str(build / "man" / page)],
                                   capture_output=True, text=True).stdout
            stray = re.findall(r"\S*(?:(?<![\w/$])_(?=\w)|(?<=\w)_(?![\w/.]))\S*", shown)
            check(not stray, f"{page} shows no stray markup ({stray[:5]})")
    # mandoc's checker, where installed: no warning or error (its style
    # notes aside).
    if shutil.which("mandoc"):
        for page in ("dmaconn.1", "libdmaconn.3"):
            proc = subprocess.run(["mandoc", "-Tlint", "-Wwarning", str(build / "man" / page)],
                                  capture_output=True, text=True)
            said = (proc.stdout + proc.stderr).strip()
            check(proc.returncode == 0 and not said, f"mandoc -Tlint passes {page} {said!r}")

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

    readme_agrees(cli)

    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
