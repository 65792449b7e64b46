#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every JSON document dmaconn writes validates against docs/dmaconn.schema.json.

Usage: json_schema_test.py BUILD_DIR   (run from anywhere)

Runs the CLI with --json over every recording in tests/ and examples/ in every
mode (a bare run, --all, each detector alone), --verify (a helper that fails,
one that is missing, a stand-in that reports pairs), --list, --version, --help,
errors (bad options, a missing recording, --mpi without its component) and,
where the MPI component and mpiexec exist, --mpi.  Every expected output in
tests/cli that is JSON is validated as well.  Then:
  - the typed keys of the schema are those of the library's property table,
    as the Python binding (dmaconn._json) reads it, with the same types;
  - the Python binding's results (as_dict()) equal the CLI's on several
    recordings, and its verify result equals the CLI's.
jsonschema comes from Debian's python3-jsonschema (tools/setup-deps.sh) for
/usr/bin/python3; .ci/run pip-installs it for another python3 first on PATH.
"""

import ctypes
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from harness import fake_verify_helper, finish

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SCHEMA = os.path.join(REPO, "docs", "dmaconn.schema.json")

try:
    import jsonschema
except ImportError:
    # The project's setup installs it, so in CI its absence is a failure;
    # elsewhere (a machine without a package index) the test is skipped.
    sys.stderr.write("json_schema_test: the jsonschema package is missing for %s (python3-jsonschema serves /usr/bin/python3; else pip install jsonschema)\n"
                     % sys.executable)
    sys.exit(1 if os.environ.get("CI") else 77)

CLEAN = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
         "ZE_AFFINITY_MASK", "ZE_FLAT_DEVICE_HIERARCHY", "DMACONN_REPLAY", "DMACONN_QUIET",
         "DMACONN_NVML_LIBRARY", "DMACONN_SYSFS_ROOT", "DMACONN_VERIFY_HELPER", "DMACONN_MPI_LIBRARY")

def env_for(extra=None):
    env = {k: v for k, v in os.environ.items() if k not in CLEAN}
    env.update(extra or {})
    return env


class Run:
    def __init__(self, build):
        self.cli = os.path.join(build, "dmaconn")
        self.build = build
        with open(SCHEMA) as f:
            self.schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(self.schema)
        self.validator = jsonschema.Draft202012Validator(self.schema)
        self.checked = 0
        self.problems = []

    def validate(self, what, doc):
        errors = sorted(self.validator.iter_errors(doc), key=lambda e: list(e.path))
        self.checked += 1
        for e in errors[:3]:
            self.problems.append("%s: %s at %s" % (what, e.message[:300], "/".join(map(str, e.path))))

    def run(self, args, extra=None):
        """The CLI's one JSON document for args (validated), or None."""
        what = " ".join(args)
        p = subprocess.run([self.cli] + args, env=env_for(extra), cwd=REPO, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        lines = p.stdout.decode("utf-8", "strict").splitlines()
        if len(lines) != 1:
            self.problems.append("%s: %d lines on stdout, expected one document" % (what, len(lines)))
            return None
        doc = json.loads(lines[0])
        self.validate(what, doc)
        if p.returncode != 0 and "error" not in doc:
            self.problems.append("%s: exit %d without an error member" % (what, p.returncode))
        return doc


def recordings():
    files = []
    for pattern in ("tests/topologies*/*.json", "tests/mpi/topologies/*.json", "tests/bad-replays/*", "examples/*.json"):
        files += sorted(glob.glob(os.path.join(REPO, pattern)))
    return [os.path.relpath(f, REPO) for f in files
            if os.path.isfile(f) and not f.endswith(("cases.json", "scenarios.json"))]


def tables_agree(r):
    """The schema's typed members are the library's typed keys (the Python
    binding asks the library: dmaconn._json.property_types), the schema's
    reason codes include/dmaconn.h's."""
    with open(os.path.join(REPO, "include", "dmaconn.h")) as f:
        codes = re.findall(r'#define DMACONN_REASON_\w+ "([^"]*)"', f.read())
    if sorted(codes) != sorted(r.schema["$defs"]["reason"]["enum"]):
        r.problems.append("schema reason codes differ from include/dmaconn.h: %s"
                          % (set(codes) ^ set(r.schema["$defs"]["reason"]["enum"])))
    # The placement's codes: a (device, NIC) pair's reason, the node's
    # nics_reason and a device's memory_mode.
    with open(os.path.join(REPO, "include", "dmaconn.h")) as f:
        header = f.read()
    defs = r.schema["$defs"]
    for prefix, enum in (("GDR_REASON", defs["gdr_reason"]["enum"]),
                         ("NICS_REASON", defs["placement"]["properties"]["nics_reason"]["enum"]),
                         ("MEMORY", defs["placement_device"]["properties"]["memory_mode"]["enum"])):
        codes = re.findall(r'#define DMACONN_%s_\w+ "([^"]*)"' % prefix, header)
        if sorted(codes) != sorted(enum):
            r.problems.append("schema DMACONN_%s_ codes differ from include/dmaconn.h: %s" % (prefix, set(codes) ^ set(enum)))
    if os.environ.get("DMACONN_JSON_SKIP_BINDING"):
        return  # a sanitized library cannot be loaded into Python: props_generated checks the schema
    sys.path.insert(0, os.path.join(REPO, "python"))
    os.environ.setdefault("DMACONN_LIBRARY", os.path.join(r.build, "libdmaconn.so.0"))
    from dmaconn import _library
    from dmaconn._json import property_types
    # The result's properties (the placement's keys have no scope), by
    # dmaconn_property_scope_of(), which the package itself does not call.
    scope_of = _library.get().dmaconn_property_scope_of
    scope_of.restype, scope_of.argtypes = ctypes.c_int, [ctypes.c_char_p]
    py = {k: {int: "integer", float: "number", bool: "boolean", list: "array"}[t] for k, t in property_types().items()
          if scope_of(k.encode())}
    if not py:
        r.problems.append("dmaconn._json.property_types() is empty")
    for where in ("device", "pair"):
        props = r.schema["$defs"][where]["properties"]
        schema = {k: v["type"][0] for k, v in props.items() if k not in ("ordinal", "from", "to", "reason", "reason_text")}
        if schema != py:
            r.problems.append("schema %s keys differ from the library's table: %s" % (where, set(schema.items()) ^ set(py.items())))


PY_COMPARE = """
import json, sys, dmaconn
out = {}
for t, c in dmaconn.list_detectors():
    out[t + "/" + c] = dmaconn.detect(t, c).as_dict()
print(json.dumps(out))
"""

PY_VERIFY = """
import json, warnings, dmaconn
warnings.simplefilter("ignore")
print(json.dumps(dmaconn.verify("cuda").as_dict()))
"""


def python_agrees(r, recordings_to_compare, helper):
    lib = os.path.join(r.build, "libdmaconn.so.0")
    base = {"DMACONN_LIBRARY": lib, "PYTHONPATH": os.path.join(REPO, "python"), "DMACONN_QUIET": "1"}
    compared = 0
    for rec in recordings_to_compare:
        p = subprocess.run([sys.executable, "-c", PY_COMPARE], env=env_for(dict(base, DMACONN_REPLAY=rec)),
                           cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        if p.returncode != 0:
            r.problems.append("python on %s: %s" % (rec, p.stderr.decode()[-500:]))
            continue
        py = json.loads(p.stdout)
        for key, want in py.items():
            t, c = key.split("/")
            doc = r.run(["--replay", rec, "-d", t, "-c", c, "--json", "-q"])
            if doc is None or doc.get("results") != [want]:
                r.problems.append("python and the CLI differ on %s %s:\n  python %s\n  cli    %s"
                                  % (rec, key, json.dumps(want)[:600], json.dumps(doc)[:600]))
            compared += 1
    p = subprocess.run([sys.executable, "-c", PY_VERIFY], env=env_for(dict(base, DMACONN_VERIFY_HELPER=helper)),
                       cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    doc = r.run(["--verify", "-d", "cuda", "--json", "-q"], {"DMACONN_VERIFY_HELPER": helper})
    # The helper's "1" and "0" are booleans, its rank an integer (the schema says so too).
    first = ((doc or {}).get("verify") or {}).get("pairs") or [{}]
    if (first[0].get("can_access_peer") is not True or first[0].get("native_atomics") is not True
            or first[0].get("performance_rank") != 0 or first[0].get("gbps") != 393.7):
        r.problems.append("--verify's pair is not typed: %s" % first[0])
    if p.returncode != 0 or doc is None or json.loads(p.stdout) != doc.get("verify"):
        r.problems.append("python and the CLI differ on --verify: %s / %s / %s"
                          % (p.stdout.decode()[:400], p.stderr.decode()[-400:], doc))
    return compared + 1


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: %s BUILD_DIR\n" % argv[0])
        return 2
    r = Run(os.path.abspath(argv[1]))
    tmp = tempfile.mkdtemp()
    try:
        helper = fake_verify_helper(os.path.join(tmp, "fake-helper"))

        tables_agree(r)
        detectors = r.run(["--list", "--json"])["detectors"]
        for rec in recordings():
            r.run(["--replay", rec, "--json"])
            r.run(["--replay", rec, "--json", "--all"])
            r.run(["--replay", rec, "--explain", "--json"])
            for d in detectors:
                r.run(["--replay", rec, "-d", d["device_type"], "-c", d["connection_type"], "--json"])
        for args, extra in [
            (["--version", "--json"], {}),
            (["--help", "--json"], {}),
            (["--format", "help", "--json"], {}),
            (["--bogus", "--json"], {}),
            (["-d", "cuda", "--json"], {}),
            (["-d", "tpu", "-c", "x", "--json"], {}),
            (["-d", "cuda", "-c", "bogus", "--json"], {}),
            (["--replay", "/nonexistent.json", "--json"], {}),
            (["--replay", "/nonexistent.json", "-d", "cuda", "-c", "nvlink", "--json"], {}),
            (["--json"], {"DMACONN_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1",
                          "DMACONN_SYSFS_ROOT": "tests/sysfs/two-nvidia"}),
            (["--verify", "-d", "cuda", "--json"], {"DMACONN_VERIFY_HELPER": "/nonexistent"}),
            (["--verify", "-d", "cuda", "--json"], {"DMACONN_VERIFY_HELPER": "/bin/false"}),
            (["--verify", "-d", "cuda", "--json"], {"DMACONN_VERIFY_HELPER": helper}),
            (["--mpi", "--json"], {"DMACONN_MPI_LIBRARY": "/nonexistent/libdmaconn_mpi.so.0"}),
        ]:
            r.run(args, extra)
        mpiexec = shutil.which("mpiexec")
        if mpiexec and os.path.exists(os.path.join(r.build, "libdmaconn_mpi.so.0")):
            version = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30).stdout
            flags = ["--allow-run-as-root", "--oversubscribe"] if "Open MPI" in version or "OpenRTE" in version else []
            for args in (["--mpi", "--json"], ["--mpi", "-d", "cuda", "-c", "nvlink", "--json"]):
                p = subprocess.run([mpiexec] + flags + ["-np", "2", r.cli] + args,
                                   # Open MPI keeps memory until exit: no leak reports from it under ASan.
                                   env=env_for({"DMACONN_REPLAY": os.path.join(REPO, "tests/topologies/h200x2.json"),
                                                "OMPI_MCA_plm_rsh_agent": "",
                                                "ASAN_OPTIONS": "detect_leaks=0"}),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
                lines = p.stdout.decode().splitlines()
                if p.returncode != 0 or len(lines) != 1:
                    r.problems.append("mpiexec %s: exit %d, %d lines: %s" % (" ".join(args), p.returncode,
                                                                          len(lines), p.stderr.decode()[-500:]))
                else:
                    doc = json.loads(lines[0])
                    r.validate("mpiexec " + " ".join(args), doc)
                    if len(doc.get("results", [])) < 1 or len(doc["results"][0]["matrix"]) != 4:
                        r.problems.append("mpiexec %s: not the 4 devices of two ranks: %s" % (" ".join(args), lines[0][:300]))
        for out in sorted(glob.glob(os.path.join(REPO, "tests", "cli", "*.out"))):
            with open(out) as f:
                text = f.read()
            if text.startswith("{"):
                r.validate(os.path.relpath(out, REPO), json.loads(text))
        # A sanitized library cannot be loaded into Python: the CMake build
        # with DMACONN_SANITIZE compares in its unsanitized twin only.
        compared = 0 if os.environ.get("DMACONN_JSON_SKIP_BINDING") else python_agrees(r, ["tests/topologies/h200x2.json", "tests/topologies/dgx1-v100.json",
                                     "tests/topologies/hgx-h100-8-degraded.json", "tests/topologies/minor-numbers.json", "examples/mi300x.json",
                                     "tests/topologies-xpu/aurora-6x2.json"], helper)
    finally:
        shutil.rmtree(tmp)
    return finish(r.problems, "%d documents validated, %d Python results compared" % (r.checked, compared))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
