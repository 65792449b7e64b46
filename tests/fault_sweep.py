#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault sweep: every NVML call the detectors make, failing every way, everywhere.

usage: fault_sweep.py BUILD_DIR [--sample N] [--filter TEXT] [--jobs N] [--list]

For every NVML function that src/backends/nvml/nvml.c calls (read from the source,
so that a new call cannot escape the sweep), every NVML error code of ERRORS
and every position (any call, each device, each link and each link of a
device where the function takes a link, each peer where it takes one, later
calls through "skip"), the sweep writes a topology file -- a base machine of
tests/topologies with the fault added (docs/replay-format.md, "faults") --
and runs `dmaconn -d cuda -c nvlink --json` and `-c p2p` on it, through the
stand-in that injects faults (BUILD_DIR/tests/libdmaconn_replay_faults.so,
tests/replay_faults.c).  Each run must:

  - exit 0, without a signal, with exactly one JSON object on stdout;
  - give N equal to the fault-free N (the bases list their GPUs in
    "pci_gpus", so N stays right when NVML becomes unusable);
  - never report more connectivity than the fault-free answer in any cell;
  - when the matrix differs from the fault-free one, carry a warning naming
    the failed function and, unless the error is benign for that function,
    the error (NVML_ERROR_...).  Benign: NOT_SUPPORTED or INVALID_ARGUMENT
    from a per-link call ("no such link"), NOT_SUPPORTED from the MIG,
    fabric, compute-capability and remote-type calls ("not applicable"):
    NVML answers so on hardware that lacks the link or the feature, and a
    matrix that then counts less needs no warning.

Then: every function of NVML_FUNCTIONS missing from the library
("missing_functions"; a required one must be named in a warning), libraries
that are not NVML at all (DMACONN_NVML_LIBRARY naming the system libz, the
test bed's fake libcuda, the replay component, a text file, a directory), and
garbage in the file (names and UUIDs of the maximal length full of JSON
metacharacters, bus ids of 31 and 32 characters, links to unknown and to
their own devices, 64 links where NVML has at most 36, duplicate devices,
CUDA_VISIBLE_DEVICES garbage).

Bases lacking P2P answers get them synthesised (peer access OK where NVLink
joins the pair, PCIe read/write only elsewhere), so that the p2p matrix has
something to lose.

DMACONN_TEST_WRAPPER (e.g. "valgrind --error-exitcode=99 --leak-check=full
-q"), when set, is put in front of every run; the sweep then runs every Nth
combination only (--sample, or DMACONN_SWEEP_SAMPLE; default: about 120
runs in all).  Without it every combination runs.  Runs go in parallel
(--jobs, default: the number of CPUs).  Prints "FAIL ..." per failing run,
a summary per group, and "N passed, M failed"; exits 1 on a failure.
Python 3 standard library only.
"""
import argparse
import concurrent.futures
import copy
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

from harness import Report, nvml_device_queries, nvml_functions_text

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TOPO = os.path.join(HERE, "topologies")
NVML_C = os.path.join(REPO, "src", "backends", "nvml", "nvml.c")
NVML_TEXT = nvml_functions_text()  # the function table, read once

ERRORS = ["UNINITIALIZED", "INVALID_ARGUMENT", "NOT_SUPPORTED", "NO_PERMISSION", "NOT_FOUND",
          "INSUFFICIENT_SIZE", "DRIVER_NOT_LOADED", "GPU_IS_LOST", "LIB_RM_VERSION_MISMATCH",
          "FUNCTION_NOT_FOUND", "UNKNOWN", "ARGUMENT_VERSION_MISMATCH", "TIMEOUT"]

# The arguments a fault can be narrowed by, per shape of a function's
# arguments (nvml_functions.h, its fifth column): d = device, l = link,
# p = peer; "" = none; None = cannot fail (no code; the MIG queries, which
# the base machines, no GPU in MIG mode, never ask, and the stand-in does
# not wrap).  FIELDS: the links the fields name.
SHAPE_ARGS = {"NONE": "", "SYS": "", "INDEX": "d", "DEV": "d", "DEV_MIG": "d", "LINK": "dl", "FIELDS": "dl",
              "PEER": "dp", "MIG_GPU": None, "MIG": None, "TEXT": None, "QUERY": "d"}
NOT_APPLICABLE = {"nvmlDeviceGetMigMode", "nvmlDeviceGetGpuFabricInfoV", "nvmlDeviceGetGpuFabricInfo",
                  "nvmlDeviceGetGpuFabricInfo_v4",
                  "nvmlDeviceGetCudaComputeCapability", "nvmlDeviceGetNvLinkRemoteDeviceType"}

# Base machines: (name, topology file, extra environment).  The H100 node
# answers link states in one batch (nvmlDeviceGetFieldValues) and its GPU 3
# has two links down, so its links' remotes are asked; the DGX-1 has direct
# GPU-GPU links only; the H200 pair runs with the batch off, so that every
# link of a switch-only node goes through the per-link calls.
BASES = [
    ("hgx-h100-8-degraded", "hgx-h100-8-degraded.json", {}),
    ("dgx1-v100", "dgx1-v100.json", {}),
    ("h200x2-nobatch", "h200x2.json", {"DMACONN_NVML_NO_BATCH": "1"}),
]
DETECTORS = ["nvlink", "p2p"]
MAX_NVLINKS = 36  # NVML_NVLINK_MAX_LINKS (src/backends/nvml/nvml_api.h)


# ------------------------------------------------------------ the sources

def nvml_functions(macro):
    """[(name, required)] of an X-macro list of nvml_functions.h, in order."""
    return [(name, req) for name, req, _ in nvml_rows(macro)]


def nvml_rows(macro):
    """[(name, required, shape)] of a list of nvml_functions.h, in order;
    NVML_DEVICE_QUERIES's rows where the list expands them (optional, DEV)."""
    text = NVML_TEXT
    body = text[text.index("#define %s_(X, D)" % macro):]
    body = body[:body.index("\n")]
    row = re.search(r"#define NVML_QUERY_FUNCTION_\(X, D, fn, key, prop\) (D\(X, fn, .*\))\n", text).group(1)
    queries = " ".join(row.replace(" fn,", " %s," % fn) for fn in device_queries())
    body = body.replace("NVML_DEVICE_QUERIES_(NVML_QUERY_FUNCTION_, X, D)", queries)
    return [(name, req == "1", shape) for name, req, shape in
            re.findall(r"D\(X,\s*(nvml\w+),.*?,\s*([01]),\s*(\w+)\)", body)]


def device_queries():
    """The functions of NVML_DEVICE_QUERIES (nvml_functions.h), in order:
    nvml.c asks each in one loop, its answer a property as it is."""
    return [fn for fn, _, _ in nvml_device_queries(NVML_TEXT)]


ARGS = {name: SHAPE_ARGS[shape] for macro in ("NVML_CORE_FUNCTIONS", "NVML_NEWEST_FUNCTIONS", "NVML_MIG_FUNCTIONS")
        for name, _, shape in nvml_rows(macro)}
PER_LINK = {fn for fn, args in ARGS.items() if args == "dl"}


def called_functions():
    with open(NVML_C) as f:
        text = f.read()
    called = set(re.findall(r"\bnvml\.(nvml\w+)\s*\(", text))
    if re.search(r"\bNVML_DEVICE_QUERIES\(\w+\)", text):
        called |= set(device_queries())
    return sorted(called)


# ---------------------------------------------------------- running the CLI

class Ctx:
    def __init__(self, cli, wrapper, tmp, timeout):
        self.cli, self.wrapper, self.tmp, self.timeout = cli, wrapper, tmp, timeout


# The test stand-in that injects the file's "faults" (tests/replay_faults.c).
FAULTS_LIBRARY = None


def clean_env(extra):
    env = dict(os.environ)
    for k in list(env):
        if k in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER") or k.startswith("DMACONN_"):
            del env[k]
    env["DMACONN_QUIET"] = "1"
    if "DMACONN_REPLAY" in extra:
        env["DMACONN_REPLAY_LIBRARY"] = FAULTS_LIBRARY
    env.update(extra)
    return env


def run_cli(ctx, env, args):
    """(returncode, stdout, stderr); returncode < 0 is a signal."""
    cmd = ctx.wrapper + [ctx.cli] + args
    try:
        p = subprocess.run(cmd, env=env, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=ctx.timeout)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %ss" % ctx.timeout
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def parse_result(out, conn):
    """The one JSON object on stdout, checked for shape; raises ValueError."""
    dec = json.JSONDecoder()
    text = out.strip()
    obj, end = dec.raw_decode(text)
    if text[end:].strip():
        raise ValueError("more than one JSON value on stdout")
    # One detector: a version 1 document with exactly one result.
    if not isinstance(obj, dict) or obj.get("version") != 1 or not isinstance(obj.get("results"), list) \
            or len(obj["results"]) != 1:
        raise ValueError("not a version 1 document with one result")
    obj = obj["results"][0]
    if not isinstance(obj, dict) or obj.get("device_type") != "cuda" or obj.get("connection_type") != conn:
        raise ValueError("not a cuda/%s result" % conn)
    m = obj.get("matrix")
    n = len(m) if isinstance(m, list) else -1
    if n < 0 or any(not isinstance(r, list) or len(r) != n for r in m):
        raise ValueError("matrix is not square")
    if any(not isinstance(x, int) or isinstance(x, bool) or x < 0 for r in m for x in r):
        raise ValueError("matrix holds something other than non-negative integers")
    if any(m[i][i] for i in range(n)):
        raise ValueError("non-zero diagonal")
    if not isinstance(obj.get("devices"), list) or len(obj["devices"]) != n:
        raise ValueError("devices do not match N")
    if not isinstance(obj.get("warnings"), list) or not all(isinstance(w, str) for w in obj["warnings"]):
        raise ValueError("warnings is not a list of strings")
    return obj


def describe_run(rc, out, err):
    tail = lambda s: "\n".join("      " + l for l in s.strip().splitlines()[-12:]) or "      (empty)"
    return "exit %s\n    stdout:\n%s\n    stderr:\n%s" % (rc, tail(out[:3000]), tail(err))


# ------------------------------------------------------------- topologies

def expand_links(dev):
    links = []
    for e in dev.get("nvlink", []) if isinstance(dev, dict) else []:
        links += [e] * int(e.get("repeat", 1))
    return links


def write_topo(ctx, name, topo):
    fd, path = tempfile.mkstemp(prefix=re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:60] + "-", suffix=".json",
                                dir=ctx.tmp)
    with os.fdopen(fd, "w") as f:
        json.dump(topo, f)
    return path


def synthesise_p2p(topo, reference):
    """Gives a base without P2P answers some: OK where NVLink joins the pair
    (per the fault-free nvlink result), PCIe read/write without atomics
    elsewhere, so that the p2p matrix is not all zero."""
    devs = topo["nvml"]["devices"]
    if any(isinstance(d, dict) and "p2p" in d for d in devs):
        return
    by_index = {}
    for i, d in enumerate(reference["devices"]):
        if isinstance(d.get("nvml_index"), int):
            by_index[d["nvml_index"]] = i
    m = reference["matrix"]
    for a, dev in enumerate(devs):
        entries = []
        for b in range(len(devs)):
            if a == b or a not in by_index or b not in by_index:
                continue
            linked = m[by_index[a]][by_index[b]] > 0
            e = {"peer": b, "read": "OK", "write": "OK", "atomics": "OK" if linked else "NS",
                 "nvlink": "OK" if linked else "NS", "pci": "OK",
                 "common_ancestor": "NODE" if (a < 4) == (b < 4) else "SYSTEM"}
            entries.append(e)
        dev["p2p"] = entries


class Base:
    def __init__(self, ctx, name, fname, env):
        self.name, self.env = name, env
        with open(os.path.join(TOPO, fname)) as f:
            self.topo = json.load(f)
        self.topo.pop("environment", None)  # the sweep's environment decides
        devs = self.topo["nvml"]["devices"]
        self.ndev = len(devs)
        self.nlinks = max([len(expand_links(d)) for d in devs] + [0])
        self.ref = {}
        ref_nvlink = self.reference(ctx, "nvlink")
        synthesise_p2p(self.topo, ref_nvlink)
        for conn in DETECTORS:
            self.ref[conn] = self.reference(ctx, conn)

    def reference(self, ctx, conn):
        path = write_topo(ctx, self.name + "-reference", self.topo)
        env = clean_env(dict(self.env, DMACONN_REPLAY=path))
        rc, out, err = run_cli(ctx, env, ["-d", "cuda", "-c", conn, "--json"])
        os.unlink(path)
        if rc != 0:
            raise SystemExit("base %s: the fault-free run fails:\n%s" % (self.name, describe_run(rc, out, err)))
        obj = parse_result(out, conn)
        if len(obj["matrix"]) != self.ndev or not any(x for r in obj["matrix"] for x in r):
            raise SystemExit("base %s: the fault-free %s matrix is empty or not %dx%d" % (
                self.name, conn, self.ndev, self.ndev))
        return obj

    def with_nvml(self, **changes):
        t = copy.deepcopy(self.topo)
        t["nvml"].update(changes)
        return t


# ----------------------------------------------------------------- checks

def compare(ref, got):
    """(more, differs): cells above the reference, and whether anything differs."""
    more = ["(%d,%d) %d > %d" % (i, j, got[i][j], ref[i][j])
            for i in range(len(ref)) for j in range(len(ref)) if got[i][j] > ref[i][j]]
    return more, got != ref


def benign(fn, err):
    return ((fn in PER_LINK and err in ("NOT_SUPPORTED", "INVALID_ARGUMENT"))
            or (fn in NOT_APPLICABLE and err == "NOT_SUPPORTED"))


def check_result(rc, out, err, conn, ref, expect_n):
    """The checks every run shares; returns (problems, parsed object or None)."""
    if rc is None:
        return [err], None
    if rc < 0:
        return ["killed by signal %d" % -rc + "\n    " + describe_run(rc, out, err)], None
    if rc != 0:
        return ["exit status %d\n    %s" % (rc, describe_run(rc, out, err))], None
    try:
        obj = parse_result(out, conn)
    except ValueError as e:
        return ["stdout: %s\n    %s" % (e, describe_run(rc, out, err))], None
    problems = []
    n = len(obj["matrix"])
    if expect_n is not None and n != expect_n:
        problems.append("N is %d, expected %d" % (n, expect_n))
    elif ref is not None and n == len(ref["matrix"]):
        more, _ = compare(ref["matrix"], obj["matrix"])
        if more:
            problems.append("more connectivity than without the fault: " + "; ".join(more[:6]))
    return problems, obj


def names(warnings, *needles):
    """Whether one warning names every needle as a whole word
    (nvmlDeviceGetGpuFabricInfo is not nvmlDeviceGetGpuFabricInfoV)."""
    pats = [re.compile(r"(?<!\w)%s(?!\w)" % re.escape(n)) for n in needles]
    return any(all(p.search(w) for p in pats) for w in warnings)


def fmt_warnings(obj):
    return "".join("\n      - " + w[:300] for w in obj["warnings"]) or " (none)"


# ------------------------------------------------------------------ cases

class Case:
    """One CLI run: a topology (or none), an environment, and what to check."""
    def __init__(self, group, label, conn, topo=None, env=None, check=None, base=None):
        self.group, self.label, self.conn = group, label, conn
        self.topo, self.env, self.check, self.base = topo, env or {}, check, base

    def run(self, ctx):
        env = dict(self.env)
        path = None
        if self.topo is not None:
            path = write_topo(ctx, self.label, self.topo)
            env["DMACONN_REPLAY"] = path
        try:
            rc, out, err = run_cli(ctx, clean_env(env), ["-d", "cuda", "-c", self.conn, "--json"])
        finally:
            if path:
                os.unlink(path)
        return self.check(self, rc, out, err)


def fault_check(fn, error):
    def check(case, rc, out, err):
        ref = case.base.ref[case.conn]
        problems, obj = check_result(rc, out, err, case.conn, ref, case.base.ndev)
        if obj is None or problems:
            return problems, "error"
        _, differs = compare(ref["matrix"], obj["matrix"])
        if not differs:
            return [], "same"
        if benign(fn, error):
            # Allowed silently; a warning that names the call must still be right.
            return [], "less (benign)"
        if not names(obj["warnings"], fn, "NVML_ERROR_" + error):
            return ["the matrix differs from the fault-free one but no warning names %s and "
                    "NVML_ERROR_%s; warnings:%s" % (fn, error, fmt_warnings(obj))], "error"
        return [], "less, warned"
    return check


def positions(kind, ndev, nlinks):
    pos = [{}]
    if "d" in kind:
        pos += [{"device": d} for d in range(ndev)]
    if "l" in kind:
        pos += [{"link": l} for l in range(nlinks + 1)]
        pos += [{"device": l % ndev, "link": l} for l in range(nlinks)]
        pos += [{"device": ndev - 1, "skip": 1}]
    if "p" in kind:
        pos += [{"peer": p} for p in range(ndev)]
        pos += [{"device": d, "peer": (d + 1) % ndev} for d in range(ndev)]
    skips = {1, max(ndev - 1, 1)}
    if "l" in kind:
        skips |= {nlinks, nlinks * ndev // 2}
    if "p" in kind:
        skips |= {ndev * (ndev - 1) // 2}
    pos += [{"skip": s} for s in sorted(skips) if s > 0]
    pos += [{"skip": 1, "times": 1}]
    return pos


# Facts behind the reasons only: swept on one base, they leave every matrix as is.
FACT_FUNCTIONS = {"nvmlDeviceGetBAR1MemoryInfo", "nvmlDeviceGetVirtualizationMode", "nvmlSystemGetConfComputeState",
                  "nvmlDeviceGetCpuAffinityWithinScope", "nvmlDeviceGetMemoryAffinity",
                  "nvmlDeviceGetNumaNodeId"} | set(device_queries())


def fault_cases(bases, functions):
    cases = []
    for base in bases:
        for fn in functions:
            if fn in FACT_FUNCTIONS and base is not bases[0]:
                continue
            for pos in positions(ARGS[fn], base.ndev, base.nlinks):
                for error in ERRORS:
                    fault = dict({"function": fn, "error": error}, **pos)
                    topo = base.with_nvml(faults=[fault])
                    if fn == "nvmlDeviceGetGpuFabricInfo":
                        # Asked only where the versioned call is missing.
                        topo["nvml"]["missing_functions"] = ["nvmlDeviceGetGpuFabricInfoV"]
                    where = ",".join("%s=%s" % kv for kv in pos.items()) or "any"
                    for conn in DETECTORS:
                        label = "%s %s %s(%s) %s" % (base.name, conn, fn, where, error)
                        cases.append(Case("fault " + fn, label, conn, topo, base.env,
                                          fault_check(fn, error), base))
    return cases


def missing_cases(bases, all_functions):
    cases = []
    for base in bases:
        for fn, required in all_functions:
            topo = base.with_nvml(missing_functions=[fn])

            def check(case, rc, out, err, fn=fn, required=required):
                ref = case.base.ref[case.conn]
                problems, obj = check_result(rc, out, err, case.conn, ref, case.base.ndev)
                if obj is None or problems:
                    return problems, "error"
                _, differs = compare(ref["matrix"], obj["matrix"])
                if (required or differs) and not names(obj["warnings"], fn):
                    return ["%s missing%s but no warning names it; warnings:%s" % (
                        fn, " (required)" if required else ", the matrix differs,", fmt_warnings(obj))], "error"
                return [], "less, warned" if differs else "same"
            for conn in DETECTORS:
                cases.append(Case("missing function", "%s %s missing %s" % (base.name, conn, fn), conn,
                                  topo, base.env, check, base))
    return cases


def library_cases(build):
    """Libraries that are not NVML, live (no replay): N from the two GPUs of
    tests/sysfs/two-nvidia, all zero, a warning about NVML."""
    import zlib  # noqa: F401  (maps the system libz, whose path we want)
    libs = []
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            if os.path.basename(path).startswith("libz.so") and path not in libs:
                libs.append(path)
    libs = libs[:1]
    for rel in ("tests/fakecuda/libcuda.so.1", "tests/fakecuda-verify/libcuda.so.1",
                "libdmaconn_replay.so.0", "libdmaconn.so.0", "dmaconn"):
        p = os.path.join(build, rel)
        if os.path.exists(p):
            libs.append(p)
    libs += [os.path.join(HERE, "cli", "not-json.txt"), "/", "/dev/null", "/nonexistent/libnvidia-ml.so.1"]
    cases = []
    for lib in libs:
        def check(case, rc, out, err, lib=lib):
            problems, obj = check_result(rc, out, err, case.conn, None, 2)
            if obj is None or problems:
                return problems, "error"
            if any(x for r in obj["matrix"] for x in r):
                return ["connectivity from a library that is not NVML: %s" % obj["matrix"]], "error"
            if not names(obj["warnings"], "NVML"):
                return ["no warning about NVML; warnings:%s" % fmt_warnings(obj)], "error"
            return [], "refused, warned"
        env = {"DMACONN_NVML_LIBRARY": lib, "DMACONN_SYSFS_ROOT": os.path.join(HERE, "sysfs", "two-nvidia"),
               "DMACONN_TEST_CUDA_MARKER": "/nonexistent/marker"}
        for conn in DETECTORS:
            cases.append(Case("not NVML", "%s DMACONN_NVML_LIBRARY=%s" % (conn, lib), conn, None, env, check))
    return cases


def garbage_cases(bases):
    by = {b.name: b for b in bases}
    hgx, dgx, h200 = by["hgx-h100-8-degraded"], by["dgx1-v100"], by["h200x2-nobatch"]
    cases = []

    def add(label, base, topo, env=None, expect_n="base", bound=None, refused=None, exact=None, conns=DETECTORS,
            compare_ref=True):
        """expect_n: "base", an int, or "<=" (at most the base's); bound:
        largest value a cell may hold; refused: the file must be refused
        (exit 1) with this text on stderr; exact: {(ordinal, key): value}
        device properties that must come back byte for byte."""
        def check(case, rc, out, err):
            if refused is not None:
                if rc != 1 or refused not in err:
                    return ["expected the file to be refused (exit 1, %r on stderr)\n    %s" % (
                        refused, describe_run(rc, out, err))], "error"
                return [], "refused"
            n = base.ndev if expect_n == "base" else None if expect_n == "<=" else expect_n
            ref = base.ref[case.conn] if compare_ref and expect_n == "base" else None
            problems, obj = check_result(rc, out, err, case.conn, ref, n)
            if obj is None or problems:
                return problems, "error"
            m = obj["matrix"]
            if expect_n == "<=" and len(m) > base.ndev:
                problems.append("N is %d, more than the %d GPUs" % (len(m), base.ndev))
            if bound is not None and case.conn == "nvlink" and any(x > bound for r in m for x in r):
                problems.append("a cell exceeds %d: %s" % (bound, m))
            for (i, key), want in (exact or {}).items():
                got = obj["devices"][i].get(key) if i < len(obj["devices"]) else None
                if got != want:
                    problems.append("devices[%d].%s is %r, expected %r" % (i, key, got, want))
            return problems, "error" if problems else "handled"
        for conn in conns:
            cases.append(Case("garbage", "%s %s %s" % (base.name, conn, label), conn, topo,
                              dict(base.env, **(env or {})), check, base))

    # Names and UUIDs of NVML's maximal length (95 bytes), full of JSON metacharacters.
    nasty = '"\\/\b\f\n\r\t\x01\x1f\x7f{}[],:é✓'
    name = (nasty * 8).encode()[:95].decode("utf-8", "ignore")
    while len(name.encode()) < 95:
        name += "x"
    uuid = "GPU-" + ("\\\"\x02" * 40)[:91]
    t = copy.deepcopy(h200.topo)
    t["nvml"]["devices"][0]["name"] = name
    t["nvml"]["devices"][1]["uuid"] = uuid
    # Results carry no control characters: tabs and line breaks become
    # spaces, other controls U+FFFD; JSON's own metacharacters stay.
    def shown(text):
        return "".join(" " if c in "\t\n\r" else "\ufffd" if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f else c
                       for c in text)
    add("maximal names and UUIDs with JSON metacharacters", h200, t,
        exact={(0, "name"): shown(name), (1, "uuid"): shown(uuid)})
    for cvd in ("GPU-\\", uuid[:20], "GPU-e45afac4,GPU-e45afac4"):
        add("CUDA_VISIBLE_DEVICES=%r with a garbage UUID" % cvd, h200, t, env={"CUDA_VISIBLE_DEVICES": cvd},
            expect_n="<=")
    # One byte too many for NVML's buffers: refused by the reader.
    t = copy.deepcopy(h200.topo)
    t["nvml"]["devices"][0]["name"] = name + "y"
    add("a name of 96 bytes", h200, t, refused="longer than NVML")
    # Bus ids: 31 characters (the longest NVML's 32-byte buffer holds with its
    # terminator) and 32 (no room for the terminator).
    for length in (31, 32):
        t = copy.deepcopy(h200.topo)
        t["nvml"]["devices"][0]["pci"]["bus_id"] = ("00000000:00:06.0" + "0" * 32)[:length]
        add("a bus id of %d characters" % length, h200, t, refused="bus_id")
        t = copy.deepcopy(dgx.topo)
        t["nvml"]["devices"][0]["nvlink"][0]["remote_pci"]["bus_id"] = ("0" * 32 + "7:00.0")[-length:]
        add("a remote bus id of %d characters" % length, dgx, t, refused="bus_id")
    # The longest bus ids NVML's format allows: 8-digit domains everywhere.
    t = copy.deepcopy(dgx.topo)
    for d in t["nvml"]["devices"]:
        d["pci"]["bus_id"] = "FFFFFFFF" + d["pci"]["bus_id"][8:]
        for e in d["nvlink"]:
            e["remote_pci"]["bus_id"] = "FFFFFFFF" + e["remote_pci"]["bus_id"][8:]
    t["pci_gpus"] = ["ffffffff" + p[4:] for p in t["pci_gpus"]]
    add("8-digit PCI domains", dgx, t)
    # Links to GPUs nobody has, and links to their own GPU.
    t = copy.deepcopy(dgx.topo)
    for d in t["nvml"]["devices"]:
        for e in d["nvlink"]:
            e["remote_pci"] = {"bus_id": "0000:77:00.0"}
    add("every link to an unknown GPU", dgx, t, bound=0)
    t = copy.deepcopy(dgx.topo)
    for d in t["nvml"]["devices"]:
        for e in d["nvlink"]:
            e["remote_pci"] = {"bus_id": d["pci"]["bus_id"]}
    add("every link to its own GPU", dgx, t, bound=0)
    # 64 links (the reader's limit) where NVML has at most 36.
    for remote in ("SWITCH", "GPU"):
        t = copy.deepcopy(h200.topo)
        for k, d in enumerate(t["nvml"]["devices"]):
            peer = t["nvml"]["devices"][1 - k]["pci"]["bus_id"]
            d["nvlink"] = [{"repeat": 64, "state": 1, "version": 6, "remote_type": remote,
                            "remote_pci": {"bus_id": peer if remote == "GPU" else "FFFFFFFF:FF:FF.0"}}]
        add("64 active %s links per GPU" % remote, h200, t, bound=MAX_NVLINKS, compare_ref=False)
        add("64 active %s links per GPU, batched" % remote, h200, t, env={"DMACONN_NVML_NO_BATCH": "0"},
            bound=MAX_NVLINKS, compare_ref=False)
    t = copy.deepcopy(h200.topo)
    t["nvml"]["devices"][0]["nvlink"] = [{"repeat": 65, "state": 1}]
    add("65 links", h200, t, refused="out of range (1 to 64)")
    # A device listed twice (the same UUID and bus id, or either alone) is
    # refused; a device count below the list.
    t = copy.deepcopy(hgx.topo)
    t["nvml"]["devices"][1] = copy.deepcopy(t["nvml"]["devices"][0])
    add("a duplicated device", hgx, t, refused="nvml.devices[1].uuid: \"%s\" is also the UUID of "
        "nvml.devices[0]" % t["nvml"]["devices"][0]["uuid"])
    add("a duplicated device, CUDA_VISIBLE_DEVICES by UUID", hgx, t, refused="is also the UUID of",
        env={"CUDA_VISIBLE_DEVICES": t["nvml"]["devices"][0]["uuid"]})
    t = copy.deepcopy(hgx.topo)
    t["nvml"]["devices"][3]["pci"] = copy.deepcopy(t["nvml"]["devices"][5]["pci"])
    t["nvml"]["devices"][3]["pci"]["bus_id"] = t["nvml"]["devices"][3]["pci"]["bus_id"].lower()
    add("two devices on one bus id", hgx, t, refused="nvml.devices[5].pci.bus_id: \"%s\" is also the bus id of "
        "nvml.devices[3]" % t["nvml"]["devices"][5]["pci"]["bus_id"])
    t = hgx.with_nvml(device_count=3)
    add("device_count 3 of 8", hgx, t, expect_n=3, compare_ref=False)
    # Extreme numbers.
    t = copy.deepcopy(hgx.topo)
    t["nvml"]["devices"][2]["cuda_compute_capability"] = [2147483647, 2147483647]
    t["nvml"]["devices"][5]["cuda_compute_capability"] = [0, 0]
    for d in t["nvml"]["devices"]:
        d["fabric"]["clique_id"] = 4294967295
        d["fabric"]["health_mask"] = 4294967295
    add("extreme compute capabilities and fabric numbers", hgx, t, compare_ref=False)
    # CUDA_VISIBLE_DEVICES garbage.
    for cvd in ("", "-1", "0,0", "99", "1,,0", " 1 , 0 ", "GPU-", "MIG-GPU-x/1/2", "0x1", "+1", "1e0",
                "\x01\x02", "GPU-" + "f" * 4000, ",".join(["0"] * 2000), "9" * 40):
        add("CUDA_VISIBLE_DEVICES=%r" % cvd[:40], hgx, hgx.topo, env={"CUDA_VISIBLE_DEVICES": cvd}, expect_n="<=")
    for order in ("", "PCI_BUS_ID", "FASTEST_FIRST", "pci_bus_id", "\x7f" * 300):
        add("CUDA_DEVICE_ORDER=%r" % order[:20], hgx, hgx.topo, env={"CUDA_DEVICE_ORDER": order})
    return cases


# ------------------------------------------------------------------- main

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--sample", type=int, default=None)
    ap.add_argument("--filter", default=None)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv[1:])
    build = os.path.abspath(args.build)
    cli = build if os.path.isfile(build) else os.path.join(build, "dmaconn")
    build = os.path.dirname(cli)
    global FAULTS_LIBRARY
    FAULTS_LIBRARY = os.path.join(build, "tests", "libdmaconn_replay_faults.so")
    if not os.path.exists(FAULTS_LIBRARY):
        print("FAIL setup: %s is missing (the fault-injecting stand-in)" % FAULTS_LIBRARY)
        return 1
    wrapper = shlex.split(os.environ.get("DMACONN_TEST_WRAPPER", ""))
    timeout = float(os.environ.get("DMACONN_TEST_TIMEOUT", "300" if wrapper else "60"))

    all_functions = nvml_functions("NVML_CORE_FUNCTIONS") + nvml_functions("NVML_NEWEST_FUNCTIONS")
    known = {fn for fn, _ in all_functions} | {fn for fn, _ in nvml_functions("NVML_MIG_FUNCTIONS")}
    called = called_functions()
    unknown = [fn for fn in called if fn not in ARGS or fn not in known]
    if unknown:
        print("FAIL sources: nvml.c calls %s, which the sweep does not know (add to ARGS)" % ", ".join(unknown))
        return 1
    # nvmlShutdown runs only in dmaconn_shutdown(), which the CLI does not
    # call: tests/test_memory.c makes it fail.
    swept = [fn for fn in called if ARGS[fn] is not None and fn != "nvmlShutdown"]
    print("NVML functions the detectors call: %d; swept with faults: %s" % (len(called), ", ".join(swept)))
    print("not called by the detectors (record or shutdown only): %s" % ", ".join(
        fn for fn, _ in all_functions if fn not in called))

    with tempfile.TemporaryDirectory(prefix="dmaconn-sweep-") as tmp:
        ctx = Ctx(cli, [], tmp, 60)
        bases = [Base(ctx, *b) for b in BASES]  # references without the wrapper
        ctx.wrapper, ctx.timeout = wrapper, timeout
        cases = (fault_cases(bases, swept) + missing_cases(bases, all_functions) + library_cases(build)
                 + garbage_cases(bases))
        if args.filter:
            cases = [c for c in cases if args.filter in c.label]
        total = len(cases)
        sample = args.sample or int(os.environ.get("DMACONN_SWEEP_SAMPLE", "0") or 0)
        if not sample:
            sample = max(1, total // 120) if wrapper else 1
        if sample > 1:
            # Every group keeps at least its first case.
            seen, picked = set(), []
            for k, c in enumerate(cases):
                if k % sample == 0 or c.group not in seen:
                    picked.append(c)
                    seen.add(c.group)
            cases = picked
        if args.list:
            for c in cases:
                print(c.label)
            return 0
        print("%d runs (%d combinations%s)%s" % (len(cases), total, ", every %dth" % sample if sample > 1 else "",
                                                 " under " + wrapper[0] if wrapper else ""), flush=True)
        report = Report(quiet=True)
        summary = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for case, (problems, outcome) in zip(cases, pool.map(lambda c: c.run(ctx), cases)):
                key = (case.group, outcome)
                summary[key] = summary.get(key, 0) + 1
                report.problems(case.label, problems)
    groups = {}
    for (group, outcome), count in sorted(summary.items()):
        groups.setdefault(group, []).append("%d %s" % (count, outcome))
    for group, parts in groups.items():
        print("  %-50s %s" % (group, ", ".join(parts)))
    return report.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
