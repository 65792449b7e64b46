# SPDX-License-Identifier: BSD-3-Clause
"""The Python tests' one harness: a pass/fail report, a clean environment and
the CLI to run (under DMACONN_TEST_WRAPPER, valgrind in memcheck builds).

    from harness import Report, clean_env, cli_command
    report = Report()
    report.check(rc == 0, "bare run exits 0", "rc %d" % rc)
    report.equal("GPU count", got, want)      # FAIL prints both values
    cli = CliRun(build, "name")                 # cli.run(*args) -> (status, out, err)
    report.problems("case name", problems)    # one line per problem
    return report.done()                      # "N passed, M failed"; 1 on failure

A test that gathers its problems in a list ends with finish(problems, summary).

Scripts under tests/ import it directly; those in sub-folders (check/, mpi/,
device/) put tests/ on sys.path first.
"""
import json
import os
import re
import shlex
import subprocess
import tempfile
from collections import namedtuple

# The variables that choose or order the devices a run sees.
VISIBILITY = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
              "GPU_DEVICE_ORDINAL", "ZE_AFFINITY_MASK", "ZE_FLAT_DEVICE_HIERARCHY")


# The NVML functions' table (its X-macro lists), which tests read.
NVML_FUNCTIONS_H = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "src", "backends", "nvml", "nvml_functions.h")


def nvml_functions_text():
    """nvml_functions.h with its macros' continued lines joined."""
    with open(NVML_FUNCTIONS_H) as f:
        return f.read().replace("\\\n", " ")


def nvml_device_queries(text=None):
    """[(function, replay key, DMACONN_PROP_ name)] of NVML_DEVICE_QUERIES,
    in order; text: nvml_functions_text(), read here when not given."""
    text = nvml_functions_text() if text is None else text
    body = text[text.index("#define NVML_DEVICE_QUERIES_(R, X, D)"):]
    body = body[:body.index("\n")]
    rows = re.findall(r'R\(X,\s*D,\s*(nvml\w+),\s*"(\w+)",\s*DMACONN_PROP_(\w+)\)', body)
    if len(rows) != body.count("R(X, D,"):
        raise SystemExit("%s: %d rows of NVML_DEVICE_QUERIES read of %d" %
                         (NVML_FUNCTIONS_H, len(rows), body.count("R(X, D,")))
    return rows

class Report:
    """Counts the checks and prints one line for each: "ok WHAT" or "FAIL WHAT: DETAIL"."""

    def __init__(self, quiet=False):
        self.passed = 0
        self.failures = []
        self.quiet = quiet  # no "ok" lines (thousands of runs)

    @property
    def failed(self):
        return len(self.failures)

    def check(self, ok, what, detail=""):
        """Records one check; returns ok."""
        if ok:
            self.passed += 1
            if not self.quiet:
                print("ok " + what, flush=True)
        else:
            self.failures.append(what)
            print("FAIL " + what + (": " + str(detail) if detail else ""), flush=True)
        return bool(ok)

    def equal(self, what, got, want):
        """A check that got == want; a failure prints both values."""
        return self.check(got == want, what, "got %r, expected %r" % (got, want))

    def problems(self, what, problems):
        """One check that passes when the list of problems is empty; a failure lists them."""
        return self.check(not problems, what, "\n  " + "\n  ".join(str(p) for p in problems) if problems else "")

    def done(self, summary=""):
        """Prints the totals (and summary) and returns the exit status: 1 when anything failed."""
        print("%d passed, %d failed%s" % (self.passed, self.failed, "; " + summary if summary else ""), flush=True)
        return 1 if self.failures else 0


def finish(problems, summary):
    """For a test that gathers its problems in a list: prints each on a FAIL
    line, then the summary; returns the exit status (1 when any)."""
    for p in problems:
        print("FAIL " + str(p), flush=True)
    print("%s, %d problems" % (summary, len(problems)), flush=True)
    return 1 if problems else 0


def clean_env(extra=None, drop=()):
    """os.environ without dmaconn's variables (DMACONN_*), the device
    visibility variables and the names in drop, then extra."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("DMACONN_") and k not in VISIBILITY and k not in drop}
    env.update(extra or {})
    return env


def hermetic_env(tmp, extra=None):
    """clean_env() as a machine without NVIDIA's libraries, kernel tree
    (tests/sysfs/no-nvidia) or verdict cache (an empty directory under tmp),
    then extra."""
    env = clean_env({"DMACONN_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1",
                     "DMACONN_CUDA_LIBRARY": "/nonexistent/libcuda.so.1",
                     "DMACONN_SYSFS_ROOT": "tests/sysfs/no-nvidia",
                     "DMACONN_CACHE_DIR": os.path.join(tmp, "no-cache")})
    env.update(extra or {})
    return env


def run_text(cmd, env, timeout, stdin=None, stdout=subprocess.PIPE):
    """Runs cmd (stdin: text for its standard input; stdout: where its
    output goes, e.g. an open file); returns (exit status, stdout, stderr) as
    text.  A run past its timeout is killed: (None, "", "timed out after N s")."""
    try:
        p = subprocess.run(cmd, input=stdin.encode() if stdin is not None else None, stdout=stdout,
                           stderr=subprocess.PIPE, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % timeout
    out = p.stdout.decode(errors="replace") if p.stdout is not None else ""
    return p.returncode, out, p.stderr.decode(errors="replace")


class CliRun:
    """The dmaconn program of a build directory (.build, .cli), run from the
    source root on a machine without NVIDIA's libraries (hermetic_env, plus
    env), and a new temporary directory (.tmp) for the files a test writes."""

    def __init__(self, build, name, env=None, timeout=120):
        self.build = os.path.abspath(build)
        self.cli = os.path.join(self.build, "dmaconn")
        self.tmp = tempfile.mkdtemp(prefix="dmaconn-%s-" % name)
        self.extra = dict(env or {})
        self.timeout = timeout

    def env(self, **extra):
        return hermetic_env(self.tmp, dict(self.extra, **extra))

    def run(self, *args, stdin=None, stdout=subprocess.PIPE, timeout=None, **extra):
        """(exit status, stdout, stderr) of dmaconn ARGS, extra added to its environment."""
        return run_text([self.cli] + list(args), self.env(**extra), timeout or self.timeout, stdin=stdin,
                        stdout=stdout)

    def write(self, name, doc):
        """Writes doc (text as it is, anything else as JSON) to .tmp/name; returns the path."""
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return path


def wrapper():
    """The command that runs our C programs in this build (valgrind), as a list."""
    return shlex.split(os.environ.get("DMACONN_TEST_WRAPPER", ""))


def cli_command(build):
    """The dmaconn program of the build directory, under the wrapper."""
    return wrapper() + [os.path.join(os.path.abspath(build), "dmaconn")]


def run(cmd, env, timeout=None, cwd=None):
    """Runs cmd; returns (exit status, stdout, stderr) as bytes."""
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


GoldenCase = namedtuple("GoldenCase", "name status env args")


def golden_cases(path, variables=None):
    """The CLI golden cases of a list (tests/dot/cases), one a line as
    cli_test.sh writes them:  NAME STATUS [VAR=value ...] -- ARGUMENTS...
    ('#' starts a comment line; words are split as the shell does, and $NAME
    is replaced from variables).  Returns {name: GoldenCase}."""
    cases = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            words = [w for w in shlex.split(line)]
            for k, v in (variables or {}).items():
                words = [w.replace("$" + k, v) for w in words]
            if len(words) < 3 or "--" not in words[2:] or not words[1].isdigit() or words[0] in cases:
                raise ValueError("%s:%d: not NAME STATUS [VAR=value ...] -- ARGUMENTS (or a repeated name)"
                                 % (path, number))
            cut = words.index("--", 2)
            env = dict(w.split("=", 1) for w in words[2:cut])
            cases[words[0]] = GoldenCase(words[0], int(words[1]), env, words[cut + 1:])
    return cases


# A stand-in for dmaconn-verify-helper: its records (tools/verify_helper.c),
# one JSON object a line, for two devices; pair 0 -> 1 passes, 1 -> 0 has the
# status given.
FAKE_VERIFY_HELPER = """#!/bin/sh
cat <<'EOF'
{"record":"driver","version":13000}
{"record":"device","ordinal":0,"pci":"0000:00:06.0","uuid":"GPU-a","name":"NVIDIA H200"}
{"record":"device","ordinal":1,"pci":"0000:00:07.0","uuid":"GPU-b","name":"NVIDIA H200"}
{"record":"pair","from":0,"to":1,"status":"pass","can_access_peer":"1","access_supported":"1","native_atomics":"1","performance_rank":0,"gbps":"393.70","latency_us":"2.10"}
{"record":"pair","from":1,"to":0,"status":"%s","can_access_peer":"1","access_supported":"1","native_atomics":"1","performance_rank":0,"reason":"wrong data"}
{"record":"done","pairs":2}
EOF
"""


def fake_verify_helper(path, status="fail"):
    """Writes FAKE_VERIFY_HELPER (1 -> 0 with status) to path, executable; returns path."""
    with open(path, "w") as f:
        f.write(FAKE_VERIFY_HELPER % status)
    os.chmod(path, 0o755)
    return path
