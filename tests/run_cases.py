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

Every case gives "n", "matrix" and "warning_count"; optional checks:
"warnings_contain" (substrings, each found in some warning, case-insensitive),
"warnings_equal" (the exact warnings, in order), "devices" (per ordinal, the
expected values of the listed device properties; null skips a device),
"pairs" (a list of {"from": I, "to": J, KEY: VALUE, ...}, values typed as in
the JSON output: the result's
pair I -> J must exist and hold exactly these values for the listed keys; a
"no_pair_keys" list inside one asserts those keys absent from that pair),
"no_pair_keys" (keys absent from every pair of the result) and "pair_count"
(the number of pairs the result describes; "pairs" absent counts as none).

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

from harness import Report, wrapper as harness_wrapper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CASES = os.path.join(HERE, "cases.json")
WARN_PREFIX = "dmaconn: warning: "
CONNECTIONS = ("nvlink", "p2p")
# Variables whose relative values name files of the repository.
PATH_VARS = ("DMACONN_SYSFS_ROOT", "DMACONN_REPLAY")


class CaseError(Exception):
    pass


def fmt_matrix(m, indent="    "):
    if not isinstance(m, list):
        return indent + repr(m)
    if not m:
        return indent + "[]"
    cells = [[json.dumps(x) for x in row] if isinstance(row, list) else [repr(row)] for row in m]
    width = max((len(c) for row in cells for c in row), default=1)
    return "\n".join(indent + "[" + " ".join(c.rjust(width) for c in row) + "]" for row in cells)


def matrix_diff(expected, got):
    lines = ["matrix differs:", "  expected:", fmt_matrix(expected), "  got:", fmt_matrix(got)]
    if (isinstance(got, list) and len(got) == len(expected)
            and all(isinstance(r, list) and len(r) == len(expected) for r in got)):
        bad = ["(%d,%d): expected %s, got %s" % (i, j, expected[i][j], got[i][j])
               for i in range(len(expected)) for j in range(len(expected)) if expected[i][j] != got[i][j]]
        if bad:
            more = " ..." if len(bad) > 8 else ""
            lines.append("  cells: " + "; ".join(bad[:8]) + more)
    return "\n".join(lines)


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


def fmt_pair(p):
    return "%s -> %s" % (p.get("from"), p.get("to"))


def check_pairs(case, obj, problems):
    """The result's "pairs" against the case's "pairs", "no_pair_keys" and "pair_count"."""
    if not any(k in case for k in ("pairs", "no_pair_keys", "pair_count")):
        return
    got = obj.get("pairs", [])
    if not isinstance(got, list) or not all(isinstance(p, dict) for p in got):
        problems.append("pairs is not a list of objects: %r" % (got,))
        return
    by_pair = {}
    for p in got:
        key = (p.get("from"), p.get("to"))
        if key in by_pair:
            problems.append("pair %s is listed twice" % fmt_pair(p))
        by_pair[key] = p
    if "pair_count" in case and len(got) != case["pair_count"]:
        problems.append("%d pairs, expected %d: %s" % (
            len(got), case["pair_count"], ", ".join(fmt_pair(p) for p in got) or "(none)"))
    for key in case.get("no_pair_keys", []):
        holders = [fmt_pair(p) for p in got if key in p]
        if holders:
            problems.append("pair key %r present, expected on no pair: %s" % (key, ", ".join(holders)))
    for exp in case.get("pairs", []):
        name = fmt_pair(exp)
        p = by_pair.get((exp["from"], exp["to"]))
        if p is None:
            problems.append("no pair %s in the result" % name)
            continue
        for k, v in exp.items():
            if k in ("from", "to", "no_pair_keys"):
                continue
            if k not in p:
                problems.append("pair %s lacks %r (expected %r)" % (name, k, v))
            elif p[k] != v:
                problems.append("pair %s: %s is %r, expected %r" % (name, k, p[k], v))
        for k in exp.get("no_pair_keys", []):
            if k in p:
                problems.append("pair %s has %r = %r, expected absent" % (name, k, p[k]))


def check_case(case, obj, stderr):
    problems = []
    n = case["n"]
    conn = connection_of(case)

    if obj.get("device_type") != "cuda":
        problems.append("device_type is %r, expected 'cuda'" % obj.get("device_type"))
    if obj.get("connection_type") != conn:
        problems.append("connection_type is %r, expected %r" % (obj.get("connection_type"), conn))

    # matrix
    m = obj.get("matrix")
    if not isinstance(m, list) or not all(isinstance(r, list) for r in m):
        problems.append("matrix missing or not a list of lists: %r" % (m,))
    else:
        shape_ok = len(m) == n and all(len(r) == n for r in m)
        ints_ok = all(isinstance(x, int) and not isinstance(x, bool) for r in m for x in r)
        if not shape_ok:
            problems.append("matrix is not %dx%d (rows: %s)" % (n, n, [len(r) for r in m]))
        if not ints_ok:
            problems.append("matrix holds non-integers")
        if m != case["matrix"]:
            problems.append(matrix_diff(case["matrix"], m))

    # devices
    devs = obj.get("devices")
    if not isinstance(devs, list):
        problems.append("devices missing or not a list: %r" % (devs,))
    else:
        exp_devs = case.get("devices")
        if len(devs) != n:
            problems.append("devices has %d entries, expected %d" % (len(devs), n))
        for i, d in enumerate(devs):
            if not isinstance(d, dict):
                problems.append("devices[%d] is not an object" % i)
                continue
            # "ordinal" always; the identity keys wherever the case knows the device
            # (the library sets them "where known": not when NVML was unusable).
            known = exp_devs is not None and i < len(exp_devs) and exp_devs[i] is not None
            keys = ("ordinal", "name", "pci_bus_id", "uuid") if known else ("ordinal",)
            missing = [k for k in keys if k not in d]
            if missing:
                problems.append("devices[%d] lacks %s" % (i, ", ".join(missing)))
            if "ordinal" in d and d["ordinal"] != i:
                problems.append("devices[%d].ordinal is %r" % (i, d["ordinal"]))
        if exp_devs is not None and len(devs) == len(exp_devs):
            for i, (e, d) in enumerate(zip(exp_devs, devs)):
                if e is None or not isinstance(d, dict):
                    continue
                for k, v in e.items():
                    if d.get(k) != v:
                        problems.append("devices[%d].%s: expected %r, got %r" % (i, k, v, d.get(k)))

    # warnings in the result
    warns = obj.get("warnings")
    if not isinstance(warns, list) or not all(isinstance(w, str) for w in warns):
        problems.append("warnings missing or not a list of strings: %r" % (warns,))
        warns = None
    else:
        if len(warns) != case["warning_count"]:
            problems.append("%d warnings, expected %d:%s" % (
                len(warns), case["warning_count"], "".join("\n    - " + w for w in warns) or " (none)"))
        for sub in case.get("warnings_contain", []):
            if not any(sub.lower() in w.lower() for w in warns):
                problems.append("no warning contains %r; warnings:%s"
                                % (sub, "".join("\n    - " + w for w in warns) or " (none)"))
        if "warnings_equal" in case and warns != case["warnings_equal"]:
            problems.append("warnings differ:\n  expected:%s\n  got:%s" % (
                "".join("\n    - " + w for w in case["warnings_equal"]) or " (none)",
                "".join("\n    - " + w for w in warns) or " (none)"))

    check_pairs(case, obj, problems)

    # warnings on stderr (the default sink)
    lines = [l[len(WARN_PREFIX):] for l in stderr.splitlines() if l.startswith(WARN_PREFIX)]
    quiet = quiet_enabled((case.get("env") or {}).get("DMACONN_QUIET"))
    want = 0 if quiet else case["warning_count"]
    if len(lines) != want:
        problems.append("stderr has %d '%s' lines, expected %d%s" % (
            len(lines), WARN_PREFIX.strip(), want, " (DMACONN_QUIET set)" if quiet else ""))
    elif warns is not None and not quiet and len(warns) == len(lines) and lines != warns:
        problems.append("stderr warnings differ from the result's:\n  stderr:%s\n  result:%s" % (
            "".join("\n    - " + w for w in lines), "".join("\n    - " + w for w in warns)))
    return problems


def validate_case(case):
    for k in ("name", "n", "matrix", "warning_count"):
        if k not in case:
            raise CaseError("cases.json: case %r lacks %r" % (case.get("name"), k))
    if not case.get("live") and "topology" not in case:
        raise CaseError("cases.json: case lacks 'topology' and is not live")
    n = case["n"]
    m = case["matrix"]
    if len(m) != n or any(len(r) != n for r in m) or any(m[i][i] for i in range(n)):
        raise CaseError("cases.json: matrix of case %r is not %dx%d with a zero diagonal" % (case["name"], n, n))
    if case.get("devices") is not None and len(case["devices"]) != n:
        raise CaseError("cases.json: case %r lists %d devices for n=%d" % (case["name"], len(case["devices"]), n))
    if connection_of(case) not in CONNECTIONS:
        raise CaseError("cases.json: case %r has connection %r, not one of %s"
                        % (case["name"], connection_of(case), ", ".join(CONNECTIONS)))
    if "warnings_equal" in case and len(case["warnings_equal"]) != case["warning_count"]:
        raise CaseError("cases.json: case %r lists %d warnings_equal for warning_count %d"
                        % (case["name"], len(case["warnings_equal"]), case["warning_count"]))
    for exp in case.get("pairs", []):
        i, j = exp.get("from"), exp.get("to")
        if not (isinstance(i, int) and isinstance(j, int) and 0 <= i < n and 0 <= j < n and i != j):
            raise CaseError("cases.json: case %r expects pair %r -> %r, not two distinct ordinals below %d"
                            % (case["name"], i, j, n))
        bad = [k for k, v in exp.items()
               if k not in ("from", "to", "no_pair_keys") and not isinstance(v, (str, int, float, bool))]
        if bad:
            raise CaseError("cases.json: case %r, pair %d -> %d: values of %s are not JSON scalars"
                            % (case["name"], i, j, ", ".join(bad)))
    if not case.get("live") and not os.path.isfile(os.path.join(REPO, case["topology"])):
        raise CaseError("topology file %s does not exist" % case["topology"])


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
    problems = check_case(case, obj, err)
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
