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
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import Report

report = Report()
check = report.check


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
    # The files a bare run reads to tell whose driver is loaded: each
    # backend's presence check (dc_backend.present).
    driver_paths = []
    for source in sorted(Path("src/backends").rglob("*.c")):
        for body in re.findall(r"^static int \w+_present\(const char \*root\)\n\{\n(.*?)^\}$",
                               source.read_text(), re.M | re.S):
            driver_paths += [p for p in re.findall(r'"(?:%s)?(/[^"]+)"', body) if "%" not in p]
    check(len(driver_paths) >= 4, f"the backends' presence checks name the files they read ({driver_paths})")
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
    readme_transcripts(cli, readme)
    # FILES says what keys the verdict cache: every key line of cache.c.
    said = {"boot_id": "the boot", "driver": "the driver", "gpu": "the GPUs", "visible": "*CUDA_VISIBLE_DEVICES*",
            "order": "*CUDA_DEVICE_ORDER*", "helper": "the dmaconn version", "helper_file": "the helper",
            "cuda_library": "CUDA driver library"}
    cache_c = Path("src/backends/cuda_verify/cache.c").read_text()
    keys = re.findall(r'dc_vcache_add\(&key, &len, &cap, "([a-z_]+)"', cache_c)
    for pair in re.findall(r'\? "([a-z_]+)" : "([a-z_]+)",', cache_c):  # the visibility variables'
        keys += pair
    entry = re.search(r"^- _~/.cache/dmaconn/verified_\n(.*?)^- ", man, re.M | re.S)
    entry = " ".join(entry.group(1).split()) if entry else ""
    check(keys and all(k in said and said[k] in entry for k in keys),
          f"FILES names every part of the verdict cache's key ({[k for k in keys if said.get(k, '?') not in entry]})")


def shown(block, out):
    """Whether the lines of an example are the output's, "..." standing for
    lines left out (and nothing else left out)."""
    want, got, i = block.splitlines(), out.splitlines(), 0
    for k, line in enumerate(want):
        if line == "...":
            nxt = want[k + 1] if k + 1 < len(want) else None
            if nxt is None:
                return True
            while i < len(got) and got[i] != nxt:
                i += 1
            continue
        if i >= len(got) or got[i] != line:
            return False
        i += 1
    return i == len(got)


def fenced(text):
    """The text of each ``` block without a language."""
    blocks, lines, inside = [], None, False
    for line in text.splitlines(True):
        if line.startswith("```"):
            if inside and lines is not None:
                blocks.append("".join(lines))
            lines = [] if not inside and line.strip() == "```" else None
            inside = not inside
        elif inside and lines is not None:
            lines.append(line)
    return blocks


def readme_transcripts(cli, readme):
    """Every `$ dmaconn ...` transcript of README.md is what the program
    prints now: replays as they are; the H200 node's live runs from its
    recording (examples/h200x2-recorded.json, its UUIDs put back); the runs on
    a machine without a driver where this is one.  The check example from
    an expectation made of the healthy HGX's replay."""
    rec = "examples/h200x2-recorded.json"
    rec_uuids = json.load(open(rec))["nvml"]["devices"]
    rec_uuids = [d["uuid"] for d in rec_uuids]
    no_driver = not any(Path(p).exists() for p in ("/proc/driver/nvidia", "/dev/kfd",
                                                   "/sys/class/kfd/kfd/topology/nodes"))
    h200_uuids = list(dict.fromkeys(re.findall(r"NVIDIA H200, \S+, (GPU-[0-9a-f-]{36})", readme)))
    seen = 0
    for block in fenced(readme):
        parts = re.split(r"^\$ ", block, flags=re.M)
        for part in parts[1:]:
            command, _, want = part.partition("\n")
            words = command.split()
            envs = dict(w.split("=", 1) for w in words if re.match(r"^[A-Z_]+=", w))
            words = [w for w in words if not re.match(r"^[A-Z_]+=", w)]
            if not words or Path(words[0]).name != "dmaconn" or words[1:2] == ["--topo"] or \
                    ("--verify" in words and "--replay" not in words):
                continue  # --topo above; a verification needs the GPUs
            args, env = words[1:], {"PATH": "/usr/bin:/bin", **envs}
            if "--replay" not in args and "NVIDIA H200" in want:
                args += ["--replay", rec]
                env["DMACONN_REPLAY_LIVE_ENV"] = "1"
            elif "--replay" not in args and not no_driver:
                continue
            proc = subprocess.run([cli] + args, capture_output=True, text=True, env=env)
            out = (proc.stderr + proc.stdout).replace(f" (replay of {rec})", "")
            for recorded, wanted in zip(rec_uuids, h200_uuids):
                out = out.replace(recorded, wanted)
            ok = shown(want, out)
            seen += 1
            check(ok, f"README.md's `{command}` shows what it prints now")
            if not ok:
                print("".join(difflib.unified_diff(want.splitlines(True), out.splitlines(True), "README.md",
                                                   command)))
    check(seen >= 5, f"README.md's transcripts were run ({seen})")
    # The check example: a healthy HGX's --json as the expectation.
    block = re.search(r"^\(`tests/topologies/hgx-h100-8-degraded.json`\), exit status 2:\n\n```\n(.*?)^```",
                      readme, re.M | re.S)
    good = subprocess.run([cli, "--replay", "tests/topologies/hgx-h100-8.json", "--json"], capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin"}).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write(good)
        f.flush()
        proc = subprocess.run([cli, "check", "--expect", f.name, "--replay",
                               "tests/topologies/hgx-h100-8-degraded.json"], capture_output=True, text=True,
                              env={"PATH": "/usr/bin:/bin"})
    check(block is not None and proc.returncode == 2 and shown(block.group(1), proc.stdout),
          "README.md's check example is what check prints for the degraded HGX")


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

    return report.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
