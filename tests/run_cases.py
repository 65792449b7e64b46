#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs the replay test bed: every case of tests/cases.json through the CLI.

usage: run_cases.py BUILD_DIR [FILTER]

BUILD_DIR is the build directory holding the `dmaconn` executable (or the
executable itself).  FILTER, when given, selects cases by name: a glob
pattern when it contains * ? or [, otherwise a substring.

For each case the CLI runs as `dmaconn -d cuda -c CONNECTION --json`, where
CONNECTION is the case's "connection" ("nvlink" when absent, or "p2p"), in a
clean environment (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER and every DMACONN_*
variable removed; DMACONN_REPLAY set to the case's topology file unless the
case is "live", and DMACONN_REPLAY_LIBRARY to BUILD_DIR/tests/
libdmaconn_replay_faults.so when the file injects "faults"; then the case's
"env" applied, null meaning unset).  The
environment variable DMACONN_TEST_WRAPPER, when set, is a command put in
front of the CLI (split like a shell would), e.g.
"valgrind --error-exitcode=99 --leak-check=full -q".  DMACONN_TEST_TIMEOUT
sets the per-case time limit in seconds (default 120).

The cases' keys and what is checked: tests/replay_cases.py (one format for
the cuda, rocm and xpu cases).

Prints "ok NAME" or "FAIL NAME: why" per case and then "N passed, M failed";
exits 1 when a case failed (2 on a usage error).  Python 3 standard library
only.
"""
import fnmatch
import json
import os
import shlex
import subprocess
import sys

import replay_cases
from harness import Report, wrapper as harness_wrapper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CASES = os.path.join(HERE, "cases.json")
CONNECTIONS = ("nvlink", "p2p")
# Variables whose relative values name files of the repository.
PATH_VARS = ("DMACONN_SYSFS_ROOT", "DMACONN_REPLAY")


class CaseError(Exception):
    pass


def quiet_enabled(value):
    return value is not None and value != "" and value != "0"


# The test stand-in that injects a file's "faults" (tests/replay_faults.c),
# beside the CLI in BUILD_DIR/tests.
FAULTS_LIBRARY = None


def injects_faults(path):
    try:
        with open(path) as f:
            topo = json.load(f)
        return "faults" in topo.get("nvml", {})
    except (OSError, ValueError, AttributeError):
        return False


def build_env(case):
    env = dict(os.environ)
    for k in list(env):
        if k in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER") or k.startswith("DMACONN_"):
            del env[k]
    if not case.get("live"):
        env["DMACONN_REPLAY"] = os.path.join(REPO, case["topology"])
        if FAULTS_LIBRARY and injects_faults(env["DMACONN_REPLAY"]):
            env["DMACONN_REPLAY_LIBRARY"] = FAULTS_LIBRARY
    for k, v in (case.get("env") or {}).items():
        if v is None:
            env.pop(k, None)
            continue
        v = str(v)
        if v and not os.path.isabs(v) and (k in PATH_VARS or (k == "DMACONN_NVML_LIBRARY" and "/" in v)):
            v = os.path.join(REPO, v)
        env[k] = v
    return env


def parse_stdout(out):
    text = out.strip()
    if not text:
        raise CaseError("stdout is empty")
    dec = json.JSONDecoder()
    try:
        obj, end = dec.raw_decode(text)
    except ValueError as e:
        raise CaseError("stdout is not JSON (%s):\n%s" % (e, indent_text(out)))
    if text[end:].strip():
        raise CaseError("stdout holds more than one JSON value; after the first:\n%s"
                        % indent_text(text[end:]))
    if not isinstance(obj, dict):
        raise CaseError("stdout is JSON but not an object: %s" % type(obj).__name__)
    # One detector: the document holds exactly one result (docs/json-output.md).
    results = obj.get("results")
    if obj.get("version") != 1 or not isinstance(results, list) or len(results) != 1:
        raise CaseError("stdout is not a version 1 document with one result:\n%s" % indent_text(out))
    return results[0]


def indent_text(s, limit=4000):
    if len(s) > limit:
        s = s[:limit] + "\n... (%d more characters)" % (len(s) - limit)
    return "\n".join("    " + line for line in s.splitlines())


def connection_of(case):
    return case.get("connection", "nvlink")


def validate_case(case):
    problems = replay_cases.validate(case)
    if case.get("matrix") is None:
        problems.append("no matrix")
    if connection_of(case) not in CONNECTIONS:
        problems.append("connection %r, not one of %s" % (connection_of(case), ", ".join(CONNECTIONS)))
    if not case.get("live") and "topology" not in case:
        problems.append("no topology and not live")
    elif not case.get("live") and not os.path.isfile(os.path.join(REPO, case["topology"])):
        problems.append("topology file %s does not exist" % case["topology"])
    if problems:
        raise CaseError("cases.json: case %r: %s" % (case.get("name"), "; ".join(problems)))


def run_case(case, cli, wrapper, timeout):
    validate_case(case)
    env = build_env(case)
    cmd = wrapper + [cli, "-d", "cuda", "-c", connection_of(case), "--json"]
    try:
        p = subprocess.run(cmd, env=env, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CaseError("timed out after %ss: %s" % (timeout, " ".join(shlex.quote(c) for c in cmd)))
    except OSError as e:
        raise CaseError("cannot run %s: %s" % (cmd[0], e))
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        raise CaseError("exit code %d\n  stdout:\n%s\n  stderr:\n%s"
                        % (p.returncode, indent_text(out) or "    (empty)", indent_text(err) or "    (empty)"))
    obj = parse_stdout(out)
    problems = replay_cases.check(dict(case, connection=connection_of(case)), obj, err, "cuda",
                                  quiet_enabled((case.get("env") or {}).get("DMACONN_QUIET")))
    if problems:
        detail = "\n".join("  " + line for pr in problems for line in pr.splitlines())
        if err.strip():
            detail += "\n  stderr:\n" + indent_text(err)
        raise CaseError("%d problem(s)\n%s" % (len(problems), detail))


def select(cases, pattern):
    if pattern is None:
        return cases
    if any(ch in pattern for ch in "*?["):
        return [c for c in cases if fnmatch.fnmatchcase(c.get("name", ""), pattern)]
    return [c for c in cases if pattern in c.get("name", "")]


def main(argv):
    if len(argv) < 2 or len(argv) > 3 or argv[1] in ("-h", "--help"):
        sys.stderr.write("usage: %s BUILD_DIR [FILTER]\n" % os.path.basename(argv[0]))
        return 2
    target = os.path.abspath(argv[1])
    cli = target if os.path.isfile(target) else os.path.join(target, "dmaconn")
    global FAULTS_LIBRARY
    FAULTS_LIBRARY = os.path.join(os.path.dirname(cli), "tests", "libdmaconn_replay_faults.so")
    wrapper = harness_wrapper()
    try:
        timeout = float(os.environ.get("DMACONN_TEST_TIMEOUT", "120"))
    except ValueError:
        timeout = 120.0
    with open(CASES) as f:
        cases = json.load(f)
    cases = select(cases, argv[2] if len(argv) == 3 else None)
    if not cases:
        sys.stderr.write("no case matches %r\n" % argv[2])
        return 2
    report = Report()
    for case in cases:
        try:
            run_case(case, cli, wrapper, timeout)
        except CaseError as e:
            report.check(False, case.get("name", "?"), e)
        else:
            report.check(True, case.get("name", "?"))
    return report.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
