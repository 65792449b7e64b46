#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every row of NVML_DEVICE_QUERIES (src/backends/nvml/nvml_functions.h) is
surfaced: a replay that answers each query gives, on every cuda result, the
row's property as an integer (the CLI's JSON and Python's results), its
recording keeps the answer under the row's replay key, and a query that
fails (an error object, or a library without the function) gives no
property and no warning.

usage: device_queries_test.py LIBDMACONN DMACONN
"""
import copy
import json
import os
import re
import subprocess
import sys

from harness import CliRun, Report, nvml_device_queries

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PROPS_H = os.path.join(REPO, "include", "dmaconn_props.h")
BASE = os.path.join(HERE, "topologies", "h200x2.json")
UINT_MAX = 2 ** 32 - 1

PYTHON = """
import json, warnings, dmaconn
warnings.simplefilter("ignore")
print(json.dumps([dmaconn.detect("cuda", c).devices for c in ("nvlink", "p2p")]))
"""


def queries():
    """[(function, replay key, property key, property type)] of the table."""
    with open(PROPS_H) as f:
        props = {m[0]: (m[1], m[2]) for m in re.findall(r'X\((\w+), "(\w+)", (\w+), DEVICE,', f.read())}
    return [(fn, key) + props.get(name, (None, None)) for fn, key, name in nvml_device_queries()]


def answer(k, i):
    """Query k's answer for NVML device i: distinct, the largest value too."""
    return UINT_MAX - k if i == 0 else 7 + 100 * k + i


def surfaced(devices, rows, i):
    """{property: value} of the rows' properties on the device with NVML index i."""
    dev = next((d for d in devices if d.get("nvml_index") == i), None)
    if dev is None:
        return None
    return {prop: dev[prop] for _, _, prop, _ in rows if prop in dev}


def main():
    lib, cli = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    report = Report()
    rows = queries()
    report.check(rows, "NVML_DEVICE_QUERIES has rows", "none read")
    for fn, key, prop, kind in rows:
        report.check(prop is not None and kind == "INT", "%s: its property is an INT row of DMACONN_PROPERTIES"
                     % fn, "property %r, type %r" % (prop, kind))
    run = CliRun(os.path.dirname(cli), "device-queries")
    with open(BASE) as f:
        base = json.load(f)
    ndev = len(base["nvml"]["devices"])

    answered = copy.deepcopy(base)
    for i, dev in enumerate(answered["nvml"]["devices"]):
        for k, (_, key, _, _) in enumerate(rows):
            dev[key] = answer(k, i)
    failing = copy.deepcopy(answered)
    for _, key, _, _ in rows:
        failing["nvml"]["devices"][1][key] = {"error": "UNKNOWN"}
    missing = copy.deepcopy(answered)
    missing["nvml"]["missing_functions"] = sorted(set(missing["nvml"].get("missing_functions", []))
                                                  | {fn for fn, _, _, _ in rows})
    want_all = {i: {prop: answer(k, i) for k, (_, _, prop, _) in enumerate(rows)} for i in range(ndev)}
    cases = [("every query answered", answered, want_all),
             ("device 1's queries fail", failing, {**want_all, 1: {}}),
             ("the library lacks them", missing, {i: {} for i in range(ndev)})]

    for label, doc, want in cases:
        topo = run.write(label.replace(" ", "-").replace("'", "") + ".json", doc)
        rc, out, err = run.run("--replay", topo, "--json")
        if not report.check(rc == 0, "%s: dmaconn --json exits 0" % label, "rc %s: %s" % (rc, err.strip())):
            continue
        results = [r for r in json.loads(out)["results"] if r["device_type"] == "cuda" and r["devices"]]
        report.check(results, "%s: cuda results" % label, out[:200])
        for r in results:
            for i in range(ndev):
                got = surfaced(r["devices"], rows, i)
                report.equal("%s: %s, NVML device %d: the properties" % (label, r["connection_type"], i), got,
                             want[i])
                report.check(all(type(v) is int for v in (got or {}).values()),
                             "%s: %s, NVML device %d: integers in the JSON" % (label, r["connection_type"], i),
                             got)
            report.equal("%s: %s: warnings" % (label, r["connection_type"]), r["warnings"], [])
        # What a recording of it keeps: the answers under the replay keys.
        rec = os.path.join(run.tmp, "recorded.json")
        rc, _, err = run.run("--replay", topo, "--record", rec)
        if report.check(rc == 0, "%s: --record exits 0" % label, err.strip()):
            with open(rec) as f:
                devs = json.load(f)["nvml"]["devices"]
            for i in range(ndev):
                kept = {key: devs[i].get(key) for _, key, _, _ in rows}
                lacks = doc["nvml"].get("missing_functions", [])
                expect = {key: None if fn in lacks else doc["nvml"]["devices"][i][key] for fn, key, _, _ in rows}
                report.equal("%s: the recording's NVML device %d" % (label, i), kept, expect)
        # Python's results: the same integers.
        env = run.env(DMACONN_REPLAY=topo, DMACONN_LIBRARY=lib, PYTHONPATH=os.path.join(REPO, "python"))
        p = subprocess.run([sys.executable, "-c", PYTHON], env=env, capture_output=True, text=True, timeout=120)
        if report.check(p.returncode == 0, "%s: Python detects" % label, p.stderr.strip()[-400:]):
            for devices in json.loads(p.stdout):
                for i in range(ndev):
                    got = surfaced(devices, rows, i)
                    report.check(got == want[i] and all(type(v) is int for v in got.values()),
                                 "%s: Python, NVML device %d: %s" % (label, i, want[i]), got)
    return report.done()


if __name__ == "__main__":
    sys.exit(main())
