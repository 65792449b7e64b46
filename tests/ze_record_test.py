#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Level Zero's recorder, answer by answer: each case of tests/ze-record/
cases.json is a "level_zero" section (an exposed node whose loader fails
one kind of call: a device's properties, its PCI properties, its
sub-devices, a vertex, its sub-vertices, a p2p pair, a driver's devices or
vertices, the drivers, zeInit), replayed and recorded; the recording's
"level_zero" must be the case's "recorded", byte for byte as JSON (the
order of keys included, which a recording keeps as first answered).  The
cases together must hold every kind of answer the section records.

usage: ze_record_test.py BUILD_DIR
"""
import json
import os
import sys
import tempfile

from harness import clean_env, cli_command, finish, run

HERE = os.path.dirname(os.path.abspath(__file__))
# What the cases' recordings must hold between them (as JSON text).
KINDS = ['"subdevices":[{', '"subdevices":{"error"', '"pci":{"bus_id"', '"pci":{"error"', '"vertex":false',
         '"vertex":{"type"', '"subvertices_error"', '"vertices_error"', '"devices_error"', '"drivers_error"',
         '"init":{"error"', '"edges":[{', '"pairs":[{', '"flags":[]}', '"to":"3","error"',
         '},{"error":"DEVICE_LOST"},']


def main():
    cases = json.load(open(os.path.join(HERE, "ze-record", "cases.json")))["cases"]
    env = clean_env({"DMACONN_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1",
                     "DMACONN_ZE_LIBRARY": "/nonexistent/libze_loader.so.1",
                     "DMACONN_ROCM_SMI_LIBRARY": "/nonexistent/librocm_smi64.so.1",
                     "DMACONN_SYSFS_ROOT": "/nonexistent"}, drop=[k for k in os.environ if k.startswith("ZE_")])
    problems, seen = [], ""
    with tempfile.TemporaryDirectory() as tmp:
        src, rec = os.path.join(tmp, "node.json"), os.path.join(tmp, "rec.json")
        for case in cases:
            with open(src, "w") as f:
                json.dump({"dmaconn_topology": 1, "level_zero": case["level_zero"]}, f)
            if os.path.exists(rec):
                os.unlink(rec)
            rc, _, err = run(cli_command(sys.argv[1]) + ["--replay", src, "--record", rec], env, timeout=300)
            if rc != 0 or not os.path.exists(rec):
                problems.append("%s: exit %s, %s" % (case["name"], rc, err.decode("utf-8", "replace").strip()))
                continue
            with open(rec) as f:
                got = json.dumps(json.load(f).get("level_zero"), separators=(",", ":"))
            want = json.dumps(case["recorded"], separators=(",", ":"))
            seen += want
            if got != want:
                at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
                problems.append("%s: recorded %s, expected %s" % (case["name"], got[max(0, at - 80):at + 80],
                                                                  want[max(0, at - 80):at + 80]))
    problems += ["no case records %s" % k for k in KINDS if k not in seen]
    return finish(problems, "%d Level Zero sections recorded" % len(cases))


if __name__ == "__main__":
    sys.exit(main())
