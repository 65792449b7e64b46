#!/usr/bin/env python3
"""Runs the replay test bed: every case of tests/cases.json through the CLI.

usage: run_cases.py BUILD_DIR [FILTER]

BUILD_DIR is the build directory holding the `dmaconn` executable (or the
executable itself).  FILTER, when given, selects cases by name: a glob
pattern when it contains * ? or [, otherwise a substring.

For each case the CLI runs as `dmaconn -d cuda -c nvlink --json` in a clean
environment (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER and every DMACONN_*
variable removed; DMACONN_REPLAY set to the case's topology file unless the
case is "live"; then the case's "env" applied, null meaning unset).  The
environment variable DMACONN_TEST_WRAPPER, when set, is a command put in
front of the CLI (split like a shell would), e.g.
"valgrind --error-exitcode=99 --leak-check=full -q".  DMACONN_TEST_TIMEOUT
sets the per-case time limit in seconds (default 120).

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

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CASES = os.path.join(HERE, "cases.json")
WARN_PREFIX = "dmaconn: warning: "
CLI_ARGS = ["-d", "cuda", "-c", "nvlink", "--json"]
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


def build_env(case):
    env = dict(os.environ)
    for k in list(env):
        if k in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER") or k.startswith("DMACONN_"):
            del env[k]
    if not case.get("live"):
        env["DMACONN_REPLAY"] = os.path.join(REPO, case["topology"])
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
    return obj


def indent_text(s, limit=4000):
    if len(s) > limit:
        s = s[:limit] + "\n... (%d more characters)" % (len(s) - limit)
    return "\n".join("    " + line for line in s.splitlines())


def check_case(case, obj, stderr):
    problems = []
    n = case["n"]

    if obj.get("device_type") != "cuda":
        problems.append("device_type is %r, expected 'cuda'" % obj.get("device_type"))
    if obj.get("connection_type") != "nvlink":
        problems.append("connection_type is %r, expected 'nvlink'" % obj.get("connection_type"))

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
    if not case.get("live") and not os.path.isfile(os.path.join(REPO, case["topology"])):
        raise CaseError("topology file %s does not exist" % case["topology"])


def run_case(case, cli, wrapper, timeout):
    validate_case(case)
    env = build_env(case)
    cmd = wrapper + [cli] + CLI_ARGS
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
    wrapper = shlex.split(os.environ.get("DMACONN_TEST_WRAPPER", ""))
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
    passed = failed = 0
    for case in cases:
        name = case.get("name", "?")
        try:
            run_case(case, cli, wrapper, timeout)
        except CaseError as e:
            failed += 1
            print("FAIL %s: %s" % (name, e), flush=True)
        else:
            passed += 1
            print("ok %s" % name, flush=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
