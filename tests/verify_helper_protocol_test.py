#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The verify helper's protocol on its own (tools/verify_helper.c): run with
the fake CUDA driver, it writes one JSON object per line, each named by its
"record" member, its values through the result codec (each reads back as the
text the helper formatted), and text the driver gives that is not UTF-8
replaced rather than breaking the line.

    verify_helper_protocol_test.py HELPER FAKE_LIBCUDA
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Report, clean_env, run, wrapper  # noqa: E402

# A bus id the driver could hand back: quotes, a backslash, an escape, a
# percent sign, '=', a space and two bytes that are not UTF-8.
HOSTILE_PCI = b'0000:1c:00.0 "q" \\ %41 =x \x1b[2J \xff\xc3'
HOSTILE_READ = '0000:1c:00.0 "q" \\ %41 =x \x1b[2J \ufffd\ufffd'
# The text each property of a pair reads back as, as the helper formats it.
BOOLS = ("can_access_peer", "access_supported", "native_atomics", "verified_read", "verified_write",
         "verified_atomics_32", "verified_atomics_64")


def records(report, what, out):
    """The records of out, one JSON object a line; None when a line is not one."""
    lines = out.split(b"\n")
    report.equal(what + ": output ends with a line break", lines[-1], b"")
    recs = []
    for k, line in enumerate(lines[:-1], 1):
        try:
            rec = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            report.check(False, "%s: line %d is JSON" % (what, k), "%r: %s" % (line[:80], e))
            return None
        if not report.check(isinstance(rec, dict) and isinstance(rec.get("record"), str),
                            "%s: line %d is an object with a record type" % (what, k), repr(rec)):
            return None
        recs.append(rec)
    return recs


def text(value):
    """The text a result holds for a property value (src/codec.h, dc_codec_text)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, str)):
        return str(value)
    return repr(value)  # Python's repr of a float is its shortest round trip, as the codec's


def check_run(report, what, recs, ndev, pairs, no_peer):
    kinds = [r["record"] for r in recs]
    report.equal(what + ": records in order", kinds,
                 ["driver"] + ["device"] * ndev + ["begin", "pair"] * len(pairs) + ["done"])
    report.equal(what + ": ordinals", [r.get("ordinal") for r in recs if r["record"] == "device"],
                 list(range(ndev)))
    begun = [(r["from"], r["to"]) for r in recs if r["record"] == "begin"]
    done = [(r["from"], r["to"]) for r in recs if r["record"] == "pair"]
    report.equal(what + ": pairs begun", begun, pairs)
    report.equal(what + ": pairs reported", done, pairs)
    report.equal(what + ": done counts them", recs[-1].get("pairs"), len(pairs))
    for r in recs:
        if r["record"] != "pair":
            continue
        name = "%s: pair %d -> %d" % (what, r["from"], r["to"])
        want = "no_peer" if (r["from"], r["to"]) in no_peer else "pass"
        report.equal(name + " status", r.get("status"), want)
        props = {k: v for k, v in r.items() if k not in ("record", "from", "to", "status")}
        report.check(all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in props.values()),
                     name + ": every value a scalar", repr(props))
        report.equal(name + ": booleans read back as the helper wrote them",
                     [text(props[k]) for k in BOOLS if k in props],
                     ["0" if want == "no_peer" else "1"] * len([k for k in BOOLS if k in props]))
        report.check(isinstance(props.get("performance_rank"), int), name + ": performance_rank an integer",
                     repr(props.get("performance_rank")))
        for key in ("gbps", "latency_us"):
            if want == "pass":
                value = text(props.get(key))
                report.check("." in value and len(value.split(".")[1]) <= 2 and float(value) >= 0,
                             name + ": %s reads back as the helper's %%.2f" % key, repr(props.get(key)))


def main():
    helper, libcuda = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    report = Report()
    base = clean_env({"DMACONN_CUDA_LIBRARY": libcuda})
    base = {k: v for k, v in base.items() if not k.startswith("FAKE_CUDA_")}
    cmd = wrapper() + [helper]

    env = dict(base, FAKE_CUDA_DEVICES="3", FAKE_CUDA_NO_PEER="0-2")
    envb = {k.encode(): v.encode() for k, v in env.items()}
    envb[b"FAKE_CUDA_PCI"] = b"0000:1a:00.0,0000:1b:00.0," + HOSTILE_PCI
    rc, out, err = run(cmd, envb, timeout=120)
    report.equal("three GPUs: exit status", rc, 0)
    recs = records(report, "three GPUs", out)
    if recs is not None:
        every = [(i, j) for i in range(3) for j in range(3) if i != j]
        check_run(report, "three GPUs", recs, 3, every, {(0, 2)})
        devices = [r for r in recs if r["record"] == "device"]
        report.equal("a bus id that is not UTF-8 arrives replaced, the rest as it was",
                     devices[2].get("pci") if len(devices) == 3 else None, HOSTILE_READ)
        report.equal("one record a line, whatever the driver said", len(out.split(b"\n")), len(recs) + 1)

    rc, out, err = run(cmd + ["--after", "0:1"], dict(base), timeout=120)
    report.equal("--after 0:1: exit status", rc, 0)
    recs = records(report, "--after 0:1", out)
    if recs is not None:
        check_run(report, "--after 0:1", recs, 2, [(1, 0)], set())

    rc, out, err = run(cmd, dict(base, DMACONN_CUDA_LIBRARY="/nonexistent/libcuda.so.1"), timeout=60)
    report.equal("no driver: exit status", rc, 2)
    recs = records(report, "no driver", out)
    if recs is not None:
        report.equal("no driver: one error record", [r["record"] for r in recs], ["error"])
        report.check("/nonexistent/libcuda.so.1" in (recs[0].get("reason") or ""), "no driver: the reason names it",
                     repr(recs[0] if recs else None))
    return report.done()


if __name__ == "__main__":
    sys.exit(main())
