#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs every topology of tests/ and examples/ through two dmaconn CLIs and
reports where their output differs.

usage: compare_cli.py OLD_CLI NEW_CLI [STAND_IN] [--old-stand-in OLD_STAND_IN] [--files FILE...]

For each replay file (tests/topologies*/, examples/; with --files, those
files instead, e.g. from tests/gen_random_topologies.py) and each sysfs tree
(tests/sysfs*/, as DMACONN_SYSFS_ROOT; not with --files), the CLIs run bare with --json (every
detector), with -d/-c for each built-in pair, text and JSON, and --topo for
each device type, with and without visible-device variables that reorder
devices or name a MIG instance (live, not pinned by the replay).

STAND_IN (BUILD/tests/libdmaconn_replay_faults.so) is put in front of the
new CLI's replay component (DMACONN_REPLAY_LIBRARY): the old component
applied the files' injected faults and modelled Intel's runtime on
physically described Level Zero nodes itself, the new one leaves both to
that test stand-in.  Without it those files differ by design.  An old CLI
whose own build already has the stand-in (d497775 and later: OLD_BUILD/tests/
libdmaconn_replay_faults.so) gets it with --old-stand-in; without it, such
an old CLI ignores the faults that the new one applies.  stdout, stderr and
the exit status must be identical, with one exception: the JSON shape.

Version 1 of the JSON document (docs/json-output.md) changed its shape on
purpose: one document {"version": 1, "dmaconn_version", "results": [...],
"error", "exit_status"} in every mode, "pairs" in every result, property
values typed (python/dmaconn/_json.py).  An OLD_CLI that writes the earlier
shape (a bare result with -d/-c, "version" a string, string values) has its
JSON converted to version 1 by upgrade() below before the comparison, which
then compares the parsed documents: every matrix entry, device, pair,
warning and error must still be the same.  A NEW_CLI already writing
version 1 is compared as it is.  Prints one line per difference and a
summary; exits 1 when something differs.  Python 3 standard library and
the repository's python/dmaconn/_json.py only (which types values through
the library beside NEW_CLI).
"""
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PAIRS = [("cuda", "nvlink"), ("cuda", "p2p"), ("rocm", "infinity_fabric"), ("rocm", "p2p"),
         ("xpu", "p2p"), ("xpu", "xelink")]


def clean_env(extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("DMACONN_") and k not in (
               "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "ROCR_VISIBLE_DEVICES",
               "HIP_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ZE_AFFINITY_MASK",
               "ZE_FLAT_DEVICE_HIERARCHY")}
    # Nothing live: no vendor library, no sysfs but the one named.
    env["DMACONN_NVML_LIBRARY"] = "/nonexistent/libnvidia-ml.so.1"
    env["DMACONN_ZE_LIBRARY"] = "/nonexistent/libze_loader.so.1"
    env["DMACONN_ROCM_SMI_LIBRARY"] = "/nonexistent/librocm_smi64.so.1"
    env.setdefault("DMACONN_SYSFS_ROOT", "/nonexistent")
    env.update(extra)
    return env


sys.path.insert(0, os.path.join(REPO, "python"))
from dmaconn._json import typed_value  # noqa: E402


def upgrade_result(r):
    """An earlier result object in version 1's shape: "pairs" always, typed values."""
    def typed(props, fixed):
        return {k: v if k in fixed else typed_value(k, v) for k, v in props.items()}
    return {"device_type": r["device_type"], "connection_type": r["connection_type"], "matrix": r["matrix"],
            "devices": [typed(d, ("ordinal",)) for d in r["devices"]],
            "pairs": [typed(p, ("from", "to")) for p in r.get("pairs", [])],
            "warnings": r["warnings"]}


def upgrade(doc, status, version):
    """An earlier detection document (bare result, error object, or
    {"version": STRING, "results"}) as the version 1 document."""
    if isinstance(doc.get("version"), int):
        return doc  # already version 1
    out = {"version": 1, "dmaconn_version": version}
    if "device_type" in doc:
        out["results"] = [upgrade_result(doc)]
    else:
        out["results"] = [upgrade_result(r) for r in doc.get("results", [])]
    if "error" in doc:
        out["error"] = doc["error"]
        out["exit_status"] = doc.get("exit_status", status)
    return out


def comparable(result, json_mode, version):
    """(exit, stdout, stderr) with a --json stdout parsed and upgraded."""
    status, out, err = result
    if not json_mode:
        return result
    try:
        doc = json.loads(out)
    except ValueError:
        return result
    return status, upgrade(doc, status, version) if isinstance(doc, dict) else doc, err


def run(cli, args, env):
    p = subprocess.run([cli] + args, env=env, capture_output=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def main():
    args = sys.argv[1:]
    files = args[args.index("--files") + 1:] if "--files" in args else None
    args = args[:args.index("--files")] if "--files" in args else args
    old_extra = {}
    if "--old-stand-in" in args:
        at = args.index("--old-stand-in")
        if at + 1 >= len(args):
            print(__doc__, file=sys.stderr)
            return 2
        old_extra = {"DMACONN_REPLAY_LIBRARY": os.path.abspath(args[at + 1])}
        args = args[:at] + args[at + 2:]
    if len(args) not in (2, 3) or files == []:
        print(__doc__, file=sys.stderr)
        return 2
    old, new = args[:2]
    # typed_value (upgrading an earlier document) asks the new library.
    os.environ.setdefault("DMACONN_LIBRARY", os.path.join(os.path.dirname(os.path.abspath(new)), "libdmaconn.so.0"))
    new_extra = {"DMACONN_REPLAY_LIBRARY": os.path.abspath(args[2])} if len(args) == 3 else {}
    old_version = run(old, ["--version"], clean_env({}))[1].decode().split()[-1]
    inputs = []
    for f in files or sorted(glob.glob(os.path.join(REPO, "tests", "topologies*", "*.json")) +
                             glob.glob(os.path.join(REPO, "examples", "*.json"))):
        if os.path.basename(f) == "cases.json":
            continue
        inputs.append((os.path.relpath(f, REPO), ["--replay", os.path.abspath(f)], {}))
    for d in [] if files else sorted(glob.glob(os.path.join(REPO, "tests", "sysfs*", "*"))):
        if os.path.isdir(d):
            inputs.append((os.path.relpath(d, REPO), [], {"DMACONN_SYSFS_ROOT": d}))
    runs = differ = 0
    for name, base, extra in inputs:
        for visible in (None, "1,0", "MIG-x,0"):
            env = dict(extra)
            if visible:
                # A replay pins the variables it recorded unless told not to.
                env.update(CUDA_VISIBLE_DEVICES=visible, ROCR_VISIBLE_DEVICES=visible,
                           ZE_AFFINITY_MASK=visible, DMACONN_REPLAY_LIVE_ENV="1")
            variants = [["--json"]] + [["-d", t, "-c", c] + j for t, c in PAIRS for j in ([], ["--json"])]
            variants += [["--topo", "-d", t] for t in ("cuda", "rocm", "xpu")]
            for args in variants:
                a = comparable(run(old, base + args, clean_env(dict(env, **old_extra))), "--json" in args,
                               old_version)
                b = comparable(run(new, base + args, clean_env(dict(env, **new_extra))), "--json" in args,
                               old_version)
                runs += 1
                if a != b:
                    differ += 1
                    what = [k for k, x, y in zip(("exit", "stdout", "stderr"), a, b) if x != y]
                    print("DIFF %s %s%s: %s" % (name, " ".join(args),
                                                " (visible %s)" % visible if visible else "",
                                                ", ".join(what)))
    print("%d runs, %d differ" % (runs, differ))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
