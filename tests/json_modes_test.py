#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""With --json, every mode of dmaconn writes exactly one JSON object.

usage: json_modes_test.py BUILD_DIR   (run from the source root)

Runs the CLI in every mode with --json (detection, --topo, --explain,
--list, --help, --version, --format help, --verify passing, failing and
checking nothing, cuda/verified verifying nothing, --record, --mpi without
its component, usage errors of every kind) and checks what
docs/json-output.md promises: standard output is one line holding one JSON
object with "version" and "dmaconn_version"; a run that exits 0 has no
"error", any other has "error", said on standard error too, and
"exit_status" equal to the exit status.  Standard library only (the schema
itself is tests/json_schema_test.py's).
"""

import json
import os
import subprocess
import sys
import tempfile

from harness import Report, clean_env

T = "tests/topologies"
# Nothing of the host may answer: no NVIDIA, AMD or Intel library or tree.
HERMETIC = {
    "DMACONN_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1",
    "DMACONN_CUDA_LIBRARY": "/nonexistent/libcuda.so.1",
    "DMACONN_ZE_LIBRARY": "/nonexistent/libze_loader.so.1",
    "DMACONN_ROCM_SMI_LIBRARY": "/nonexistent/librocm_smi64.so.1",
    "DMACONN_SYSFS_ROOT": "tests/sysfs/no-nvidia",
}

# The helper's line protocol (src/backends/cuda_verify/verify_helper.c) for two devices.
HELPER = """#!/bin/sh
echo "driver version=13000"
echo "device ordinal=0 pci=0000:00:06.0 uuid=GPU-a name=NVIDIA%%20H200"
echo "device ordinal=1 pci=0000:00:07.0 uuid=GPU-b name=NVIDIA%%20H200"
echo "pair from=0 to=1 status=pass can_access_peer=1 access_supported=1 native_atomics=1 performance_rank=0 gbps=393.70 latency_us=2.10"
echo "pair from=1 to=0 status=%s can_access_peer=1 access_supported=1 native_atomics=1 performance_rank=0 reason=wrong%%20data"
echo "done pairs=2"
"""


def modes(tmp, passing, failing):
    """(label, args, extra environment, expected exit status) per mode."""
    rec = os.path.join(tmp, "rec.json")
    return [
        ("bare run", [], {}, 0),
        ("bare run, a replay", ["--replay", T + "/h200x2.json"], {}, 0),
        ("--all", ["--all"], {}, 0),
        ("-d/-c", ["--replay", T + "/h200x2.json", "-d", "cuda", "-c", "nvlink"], {}, 0),
        ("--format json", ["--replay", T + "/h200x2.json", "--format", "json"], {}, 0),
        ("--topo", ["--topo", "--replay", T + "/h200x2.json"], {}, 0),
        ("--topo, no vendor", ["--topo"], {}, 0),
        ("--topo -d", ["--topo", "-d", "rocm", "--replay", "examples/mi300x.json"], {}, 0),
        ("--explain", ["--explain", "--replay", "examples/pcie-only.json"], {}, 0),
        ("--explain -d/-c", ["--explain", "--replay", "examples/pcie-only.json", "-d", "cuda", "-c", "p2p"], {}, 0),
        ("--list", ["--list"], {}, 0),
        ("--help", ["--help"], {}, 0),
        ("-h", ["-h"], {}, 0),
        ("--version", ["--version"], {}, 0),
        ("-V", ["-V"], {}, 0),
        ("--format help", ["--format", "help"], {}, 0),
        ("--verify passing", ["--verify"], {"DMACONN_VERIFY_HELPER": passing}, 0),
        ("--verify failing", ["--verify"], {"DMACONN_VERIFY_HELPER": failing}, 1),
        ("--verify, helper missing", ["--verify"], {"DMACONN_VERIFY_HELPER": "/nonexistent"}, 1),
        ("--verify, helper failing", ["--verify", "-d", "cuda"], {"DMACONN_VERIFY_HELPER": "/bin/false"}, 1),
        ("cuda/verified, nothing verified", ["-d", "cuda", "-c", "verified"],
         {"DMACONN_VERIFY_HELPER": "/bin/false", "DMACONN_NO_CACHE": "1",
          "DMACONN_SYSFS_ROOT": "tests/sysfs/two-nvidia"}, 1),
        ("--explain cuda/verified, nothing verified", ["--explain", "-d", "cuda", "-c", "verified"],
         {"DMACONN_VERIFY_HELPER": "/bin/false", "DMACONN_NO_CACHE": "1",
          "DMACONN_SYSFS_ROOT": "tests/sysfs/two-nvidia"}, 1),
        ("--mpi without its component", ["--mpi"], {"DMACONN_MPI_LIBRARY": "/nonexistent/libdmaconn_mpi.so.0"}, 1),
        ("a missing replay", ["--replay", "/nonexistent.json"], {}, 1),
        ("a missing replay, -d/-c", ["--replay", "/nonexistent.json", "-d", "cuda", "-c", "nvlink"], {}, 1),
        ("a bad replay", ["--replay", "tests/cli/not-json.txt", "-d", "cuda", "-c", "nvlink"], {}, 1),
        ("--record", ["--record", rec], {}, 2),
        ("an unknown option", ["--bogus"], {}, 2),
        ("a misspelt option", ["--jsn"], {}, 2),
        ("a flag with a value", ["--all=1"], {}, 2),
        ("a missing argument", ["--json", "--replay"], {}, 2),
        ("an unknown command", ["chek"], {}, 2),
        ("a command after options", ["-q", "check"], {}, 2),
        ("an unknown device type", ["-d", "tpu", "-c", "nvlink"], {}, 2),
        ("an unknown connection", ["-d", "cuda", "-c", "bogus"], {}, 2),
        ("another type's connection", ["-d", "rocm", "-c", "nvlink"], {}, 2),
        ("-d without -c", ["-d", "cuda"], {}, 2),
        ("an unknown format", ["--format", "bogus"], {}, 2),
        ("--format with --json", ["--format", "prometheus"], {}, 2),
        ("--topo --verify", ["--topo", "--verify"], {}, 2),
        ("a bad --timeout", ["--verify", "--timeout", "0"], {}, 2),
        ("--timeout alone", ["--timeout", "5"], {}, 2),
        ("--record with --json", ["--record", rec, "--replay", T + "/h200x2.json"], {}, 2),
        ("--record --verify with --json", ["--record", rec, "--verify"], {}, 2),
        ("-d misspelt, alone", ["-d", "cdua"], {}, 2),
        ("-d misspelt, --topo", ["--topo", "-d", "cdua"], {}, 2),
        ("-d misspelt, --explain", ["--explain", "-d", "cdua"], {}, 2),
        ("-d misspelt, --verify", ["--verify", "-d", "cdua"], {}, 2),
        ("-c misspelt, rocm", ["-d", "rocm", "-c", "infinity_fabrik"], {}, 2),
        ("-c misspelt, xpu", ["-d", "xpu", "-c", "xelnik"], {}, 2),
        ("-c misspelt, --explain", ["--explain", "-d", "cuda", "-c", "nvlnk"], {}, 2),
        ("-c with --topo", ["--topo", "-d", "rocm", "-c", "p2p"], {}, 2),
        ("an unknown option between others", ["--replay", T + "/h200x2.json", "--bogus", "-d", "cuda", "-c",
                                               "nvlink"], {}, 2),
        ("an argument left over", ["-d", "cuda", "-c", "nvlink", "extra"], {}, 2),
        ("a misspelt command and an option", ["chekc", "--expect", "x.json"], {}, 2),
        ("--verify of a type without one", ["--verify", "-d", "rocm"], {}, 1),
        ("--mpi without its component, a replay", ["--mpi", "--replay", T + "/h200x2.json"],
         {"DMACONN_MPI_LIBRARY": "/nonexistent/libdmaconn_mpi.so.0"}, 1),
    ] + [("--format %s with --json" % f, ["--replay", T + "/h200x2.json", "--format", f], {}, 2)
         for f in ("dot", "nfd", "slurm", "nccl-xml", "prometheus")]


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    cli = os.path.join(os.path.abspath(argv[1]), "dmaconn")
    report = Report()
    with tempfile.TemporaryDirectory() as tmp:
        helpers = {}
        for name, status in (("passing", "pass"), ("failing", "fail")):
            helpers[name] = os.path.join(tmp, name)
            with open(helpers[name], "w") as f:
                f.write(HELPER % status)
            os.chmod(helpers[name], 0o755)
        os.mkdir(os.path.join(tmp, "cache"), 0o700)
        for label, args, extra, status in modes(tmp, helpers["passing"], helpers["failing"]):
            env = clean_env(HERMETIC)
            env["DMACONN_CACHE_DIR"] = os.path.join(tmp, "cache")
            env.update(extra)
            args = args if "--json" in args else args + ["--json"]  # last, unless an option must be
            for first in (False, True):
                if first:  # and first (after a command word), where it may be anywhere
                    rest = [a for a in args if a != "--json"]
                    at = 1 if rest and not rest[0].startswith("-") else 0
                    args = rest[:at] + ["--json"] + rest[at:]
                p = subprocess.run([cli] + args, env=env, stdin=subprocess.DEVNULL,
                                   capture_output=True, timeout=120)
                out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
                problems = []
                if p.returncode != status:
                    problems.append("exit status %d, expected %d" % (p.returncode, status))
                doc = None
                if out.count("\n") != 1 or not out.endswith("\n"):
                    problems.append("%d lines on standard output, expected one" % out.count("\n"))
                try:
                    doc = json.loads(out)
                except ValueError as e:
                    problems.append("standard output is not one JSON document (%s)" % e)
                if doc is not None and not isinstance(doc, dict):
                    problems.append("the document is not an object")
                    doc = None
                if doc is not None:
                    if doc.get("version") != 1 or not isinstance(doc.get("dmaconn_version"), str):
                        problems.append("no version and dmaconn_version")
                    if p.returncode == 0 and ("error" in doc or "exit_status" in doc):
                        problems.append("exit status 0 with an error member: %r" % doc.get("error"))
                    if p.returncode != 0:
                        if not isinstance(doc.get("error"), str) or not doc["error"]:
                            problems.append("exit status %d without an error member" % p.returncode)
                        elif "dmaconn: %s\n" % doc["error"] not in err:
                            problems.append("its error %r is not said on standard error" % doc["error"])
                        if doc.get("exit_status") != p.returncode:
                            problems.append("exit_status %r, exit status %d" % (doc.get("exit_status"), p.returncode))
                what = "dmaconn %s (%s)" % (" ".join(args), label)
                if problems:
                    problems += ["stdout: " + out[:300].rstrip(), "stderr: " + err[-300:].rstrip()]
                report.problems(what, problems)
    return report.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
