#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`dmaconn check` against expectations a careless or hostile hand wrote,
and nodes that cannot answer: each case asserts the Nagios status (0 OK,
1 WARNING, 2 CRITICAL, 3 UNKNOWN) and what the report says.

  - an expectation that proves nothing (no device, no verdict) is UNKNOWN;
  - a --verify document of one pair keeps its devices;
  - "verified" is the library's rule (every capability proven) in check and
    prometheus alike;
  - integers beyond int in a matrix or an index make the file invalid;
  - live, no driver (no NVML library, nvmlInit_v2 failing): UNKNOWN, and
    prometheus says dmaconn_up 0 without pair series;
  - a report that cannot be written is UNKNOWN; --json and -q;
  - an index far beyond the file's devices costs nothing;
  - a FIFO is refused, not waited on (every run has a timeout);
  - names holding '|' or a newline cannot forge performance data or lines;
    no name makes --json invalid or the report other than UTF-8;
  - the pairs read from the text are refused where Jansson would refuse.

Usage: check_test.py BUILD_DIR   (run from the source root)
"""
import json
import os
import resource
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from harness import CliRun, Report  # noqa: E402

C = CliRun(sys.argv[1], "check", timeout=60)
BUILD, CLI, TMP = C.build, C.cli, C.tmp
env_of, run, write = C.env, C.run, C.write
FAKE_NVML = os.path.join(BUILD, "tests", "fakenvml", "libnvidia-ml.so.1")
FAKE_CUDA = os.path.join(BUILD, "tests", "fakecuda-verify", "libcuda.so.1")
HELPER = os.path.join(BUILD, "dmaconn-verify-helper")
T = "tests/topologies"
EXPECT = "tests/check/hgx-h100-8.expect.json"
report = Report()
check = report.check


def jload(text):
    try:
        return json.loads(text)
    except ValueError:
        return {}


def load(path):
    with open(path) as f:
        return json.load(f)


def nagios_ok(out, what):
    """One '|' on the first line, each later line a finding of its own."""
    lines = out.split("\n")
    check(lines[0].count("|") == 1, "%s: one '|' on the first line: %r" % (what, lines[0][:200]))
    check(all(l.split(": ")[0] in ("CRITICAL", "WARNING", "UNKNOWN") for l in lines[1:] if l),
          "%s: every other line starts with its state: %r" % (what, lines[1:4]))


# 7: an expectation that proves nothing is not OK.
st, out, err = run("-d", "cuda", "-c", "verified", "--json", "-q")
empty = write("verified-empty.json", out)
check(st == 1 and load(empty)["results"][0]["devices"] == [], "7: a verified expectation without verdicts (%s)" % st)
st, out, _ = run("check", "--expect", empty, "--replay", T + "/hgx-h100-8-degraded.json")
# The CLI marks a verified run that verified nothing as failed ("error"),
# which check refuses as a failed run; either way it is UNKNOWN, never OK.
check(st == 3 and ("expects nothing" in out or "records a failed run" in out) and "OK" not in out.split("\n")[0],
      "7: no verdict against a degraded node is UNKNOWN (%s: %s)" % (st, out))
bare = load(empty)
for k in ("error", "exit_status"):
    bare.pop(k, None)
stripped = write("verified-empty-bare.json", json.dumps(bare))
st, out, _ = run("check", "--expect", stripped, "--replay", T + "/hgx-h100-8-degraded.json")
check(st == 3 and "expects nothing" in out, "7: the same without its error member is UNKNOWN (%s: %s)" % (st, out))
st, out, _ = run("-d", "cuda", "-c", "nvlink", "--json", "-q")
none = write("nvlink-empty.json", out)
st, out, _ = run("check", "--expect", none)
check(st == 3 and "expects nothing" in out, "7: 0 devices expected, 0 found, is UNKNOWN (%s: %s)" % (st, out))

# 8: a --verify document of one pair: two devices, compared.
FAKE = dict(FAKE_CUDA_DEVICES="2", DMACONN_VERIFY_HELPER=HELPER, DMACONN_CUDA_LIBRARY=FAKE_CUDA, DMACONN_NO_CACHE="1")
st, out, _ = run("--verify", "--json", "-q", **FAKE)
doc = json.loads(out)
doc["verify"]["pairs"] = [p for p in doc["verify"]["pairs"] if (p["from"], p["to"]) == (0, 1)]
one = write("verify-one-pair.json", doc)
check(st == 0 and len(doc["verify"]["pairs"]) == 1, "8: the verify document of one pair (%s)" % st)
st, out, _ = run("check", "--expect", one, "--verify", **FAKE)
check(st == 0, "8: one pair that passes again is OK (%s: %s)" % (st, out))
st, out, _ = run("check", "--expect", one, "--verify", FAKE_CUDA_CORRUPT="1", **FAKE)
check(st == 2 and "GPU 0 (0000:1a:00.0) -> GPU 1 (0000:1b:00.0): verification expected pass, found fail" in out,
      "8: one pair that fails now is CRITICAL (%s: %s)" % (st, out))

# 9: "pass" with a capability not proven is no pass: 0 in the matrix, 0 in
# prometheus, CRITICAL in check.
rec = load("tests/topologies-reasons/verified-partial.json")
pair = rec["verification"]["pairs"][0]
rec["verification"]["pairs"] = [pair, dict(pair, **{"from": 1, "to": 0})]
good = write("verified-good.json", rec)
rec["verification"]["pairs"][0] = dict(pair, write_verified="no")
bad = write("verified-write-no.json", rec)
st, out, _ = run("--replay", good, "-d", "cuda", "-c", "verified", "--json", "-q")
good_expect = write("verified-good.expect.json", out)
check(st == 0 and json.loads(out)["results"][0]["matrix"] == [[0, 1], [1, 0]], "9: the good recording passes")
st, out, _ = run("--replay", bad, "-d", "cuda", "-c", "verified", "--json", "-q")
check(json.loads(out)["results"][0]["matrix"] == [[0, 0], [1, 0]], "9: write not proven is 0 in the matrix")
st, out, _ = run("--replay", bad, "-d", "cuda", "-c", "verified", "--format", "prometheus")
series = [l for l in out.splitlines() if l.startswith("dmaconn_pair_verified{") and 'from_index="0"' in l
          and 'to_index="1"' in l]
check(len(series) == 1 and series[0].endswith(" 0"), "9: and 0 in prometheus (%s)" % series)
st, out, _ = run("check", "--expect", good_expect, "--replay", bad)
check(st == 2 and "GPU 0 (0000:00:06.0) -> GPU 1 (0000:00:07.0): verification expected pass" in out,
      "9: and CRITICAL in check (%s: %s)" % (st, out))
st, out, _ = run("check", "--expect", good_expect, "--replay", good)
check(st == 0, "9: the good recording against itself is OK (%s: %s)" % (st, out))

# 10: beyond int: invalid, not truncated.
exp = load(EXPECT)
nvlink = [r for r in exp["results"] if r["connection_type"] == "nvlink"][0]
nvlink["matrix"][0][1] = 2 ** 32 + 18
st, out, _ = run("check", "--expect", write("matrix-2p32.json", exp), "--replay", T + "/hgx-h100-8.json")
check(st == 3 and out.startswith("DMACONN UNKNOWN - cannot use --expect") and "[0][1]" in out,
      "10: a matrix entry of 2^32+18 is an invalid file (%s: %s)" % (st, out))
exp = load(EXPECT)
p2p = [r for r in exp["results"] if r["connection_type"] == "p2p"][0]
p2p["pairs"][0]["from"] = 2 ** 32
st, out, _ = run("check", "--expect", write("index-2p32.json", exp), "--replay", T + "/hgx-h100-8.json")
check(st == 3 and "cannot use --expect" in out, "10: a pair index of 2^32 is an invalid file (%s: %s)" % (st, out))

# 11: live, no driver: UNKNOWN; prometheus dmaconn_up 0 and no pair series.
for what, extra in (("no NVML library", {}),
                    ("nvmlInit_v2 DRIVER_NOT_LOADED", dict(DMACONN_NVML_LIBRARY=FAKE_NVML, DMACONN_FAKE_NVML_INIT="9")),
                    ("nvmlInit_v2 DRIVER_NOT_LOADED, GPUs in sysfs",
                     dict(DMACONN_NVML_LIBRARY=FAKE_NVML, DMACONN_FAKE_NVML_INIT="9",
                          DMACONN_SYSFS_ROOT="tests/sysfs/two-nvidia"))):
    st, out, _ = run("check", "--expect", EXPECT, **extra)
    check(st == 3 and "detection could not run" in out and "CRITICAL" not in out,
          "11: %s: check --expect is UNKNOWN (%s: %s)" % (what, st, out))
    st, out, _ = run("check", "--expect-links", "18", **extra)
    check(st == 3, "11: %s: check --expect-links is UNKNOWN (%s: %s)" % (what, st, out))
    st, out, _ = run("-d", "cuda", "-c", "nvlink", "--format", "prometheus", **extra)
    check("\ndmaconn_up 0\n" in out and "dmaconn_pair_" not in out,
          "11: %s: prometheus dmaconn_up 0, no pair series (%s)" % (what, out.count("dmaconn_pair_")))
st, out, _ = run("-d", "cuda", "-c", "nvlink", "--format", "prometheus", DMACONN_NVML_LIBRARY=FAKE_NVML)
check("\ndmaconn_up 1\n" in out and out.count("dmaconn_pair_connectivity{") == 56,
      "11: the stand-in NVML that answers: dmaconn_up 1 and its 56 pairs")
# A detector that gave up midway (an NVML call failing during the scan) says
# nothing of the pairs: UNKNOWN, dmaconn_up 0, never a node of lost pairs.
FAULTS = dict(DMACONN_REPLAY_LIBRARY=os.path.join(BUILD, "tests", "libdmaconn_replay_faults.so"))
for what, args, fmt in (("nvmlDeviceGetNvLinkState failing midway",
                         ("check", "--expect", EXPECT, "--replay", T + "/midscan-fail.json"),
                         ("--replay", T + "/midscan-fail.json", "-d", "cuda", "-c", "nvlink")),
                        ("the same, --expect-links",
                         ("check", "--expect-links", "18", "--replay", T + "/midscan-fail.json"), None),
                        ("nvmlDeviceGetP2PStatus failing",
                         ("check", "--fully-connected", "-d", "cuda", "-c", "p2p", "--replay",
                          T + "/p2p-status-fail.json"),
                         ("--replay", T + "/p2p-status-fail.json", "-d", "cuda", "-c", "p2p"))):
    st, out, _ = run(*args, **FAULTS)
    check(st == 3 and "detection could not run" in out and "CRITICAL" not in out,
          "11: %s: check is UNKNOWN (%s: %s)" % (what, st, out[:300]))
    if fmt:
        st, out, _ = run(*(fmt + ("--format", "prometheus")), **FAULTS)
        check("\ndmaconn_up 0\n" in out and "dmaconn_pair_" not in out,
              "11: %s: prometheus dmaconn_up 0, no pair series (%s)" % (what, out.count("dmaconn_pair_")))
topo = load("tests/topologies-xpu/pvc-2x2.json")
for what, fault, conn in (("zeDeviceGetP2PProperties failing", {"function": "zeDeviceGetP2PProperties", "device": "0.0",
                                                                 "peer": "1.0"}, "p2p"),
                          ("zeFabricEdgeGetExp failing", {"function": "zeFabricEdgeGetExp", "device": "0.0",
                                                          "peer": "1.0"}, "xelink")):
    topo["level_zero"]["faults"] = [dict(fault, error="DEVICE_LOST")]
    path = write("pvc-fault.json", topo)
    st, out, _ = run("check", "--fully-connected", "-d", "xpu", "-c", conn, "--replay", path, **FAULTS)
    check(st == 3 and "detection could not run" in out and "CRITICAL" not in out,
          "11: xpu, %s: check is UNKNOWN (%s: %s)" % (what, st, out[:300]))
    st, out, _ = run("--replay", path, "-d", "xpu", "-c", conn, "--format", "prometheus", **FAULTS)
    check("\ndmaconn_up 0\n" in out and "dmaconn_pair_" not in out,
          "11: xpu, %s: prometheus dmaconn_up 0, no pair series (%s)" % (what, out.count("dmaconn_pair_")))

# 12: a report that cannot be written; --json; -q.
ARGS = ("check", "--expect", EXPECT, "--replay", T + "/hgx-h100-8-degraded.json")
if os.access("/dev/full", os.W_OK):
    with open("/dev/full", "w") as full:
        st, _, err = run(*ARGS, stdout=full)
    check(st == 3 and "cannot write standard output" in err, "12: /dev/full is UNKNOWN (%s: %s)" % (st, err))
    with open("/dev/full", "w") as full:
        st, _, err = run(*(ARGS + ("--json",)), stdout=full)
    check(st == 3, "12: --json to /dev/full is UNKNOWN (%s: %s)" % (st, err))
p = subprocess.run("exec %s %s >&-" % (CLI, " ".join(ARGS)), shell=True, stderr=subprocess.PIPE,
                   env=env_of(), timeout=60)
check(p.returncode == 3, "12: a closed standard output is UNKNOWN (%s)" % p.returncode)
p = subprocess.run("exec %s %s -q >&-" % (CLI, " ".join(ARGS)), shell=True, stderr=subprocess.PIPE,
                   env=env_of(), timeout=60)
check(p.returncode == 2 and not p.stderr, "12: -q writes nothing: a closed output is no failure (%s)" % p.returncode)
st, out, err = run(*(ARGS + ("-q",)))
check(st == 2 and out == "" and err == "", "12: -q: CRITICAL, no output (%s: %r %r)" % (st, out, err))
st, out, err = run(*(ARGS + ("--json",)))
doc = jload(out)
check(st == 2 and doc.get("status") == "CRITICAL" and doc.get("exit_code") == 2 and
      doc.get("perfdata", {}).get("critical") == len(doc.get("findings", [])) and
      all(set(f) == {"state", "text"} for f in doc.get("findings", [])) and out.count("\n") == 1,
      "12: --json: one object, status, exit code, findings (%s: %s)" % (st, out[:300]))
st, out, _ = run("check", "--expect", EXPECT, "--bogus", "--json")
check(st == 3 and jload(out).get("status") == "UNKNOWN", "12: --json reports a usage error as JSON too (%s)" % out)
st, out, _ = run("check", "--expect", "/nonexistent.json", "--json")
check(st == 3 and jload(out).get("exit_code") == 3, "12: --json reports a missing file as JSON (%s)" % out)
st, out, _ = run("check", "--help")
check(st == 0 and "--json" in out and "-q, --quiet" in out, "12: --help names --json and -q")

# 14: indices far beyond the file's devices cost nothing.
for what, doc in (("verify document, to 32767",
                   {"version": 1, "verify": {"device_type": "cuda", "pairs": [
                       {"from": 0, "to": 32767, "status": "pass"}]}}),
                  ("verify document, from 5999",
                   {"version": 1, "verify": {"device_type": "cuda", "pairs": [
                       {"from": 5999, "to": 0, "status": "pass", "verified_read": "1", "verified_write": "1",
                        "verified_atomics_32": "1", "verified_atomics_64": "1"}]}})):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    st, out, _ = run("check", "--expect", write("far.json", doc), "--replay", T + "/hgx-h100-8.json", timeout=60)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    check(st == 3 and peak < max(before, 200 * 1024), "14: %s: UNKNOWN, peak %d KiB (%s: %s)" % (what, peak, st, out))
exp = load(EXPECT)
p2p = [r for r in exp["results"] if r["connection_type"] == "p2p"][0]
p2p["pairs"][0]["to"] = 5999
st, out, _ = run("check", "--expect", write("far-results.json", exp), "--replay", T + "/hgx-h100-8.json")
check(st == 3 and "below 8" in out, "14: a pair beyond the result's 8 devices is an invalid file (%s: %s)" % (st, out))

# 13: the results' pairs are read from the file's text, not built: as Jansson
# reads them (a key written with an escape), and refused where it would.
exp = load(EXPECT)
p2p = [r for r in exp["results"] if r["connection_type"] == "p2p"][0]
p2p["pairs"][0]["nvlink_gbps"] = 9999.0
text = json.dumps(exp, separators=(",", ":"))


def refused(what, bad, name, where):
    """The expectation text bad (text with what) is an invalid file."""
    check(bad != text, "13: the file with %s differs" % what)
    st, out, _ = run("check", "--expect", write(name, bad), "--replay", T + "/hgx-h100-8.json")
    check(st == 3 and out.startswith("DMACONN UNKNOWN - cannot use --expect"),
          "13: %s with %s is an invalid file (%s: %s)" % (where, what, st, out))


st, out, _ = run("check", "--expect", write("fast.json", text), "--replay", T + "/hgx-h100-8.json")
check(st == 2 and "slower links: expected 555.5 GB/s per link" in out, "13: a pair's speed is read (%s: %s)" % (st, out))
escaped = text.replace('"pairs":[{"from":0', '"p\\u0061irs":[{"from":0', 1)
st, out, _ = run("check", "--expect", write("fast-escaped.json", escaped), "--replay", T + "/hgx-h100-8.json")
check(st == 2 and "slower links" in out, "13: ... under a key written with an escape (%s: %s)" % (st, out))
for what, bad in (("a trailing comma", text.replace('"nvlink_rate_source":"nvlink_version"}]', '"nvlink_rate_source":"nvlink_version"},]', 1)),
                  ("a missing comma", text.replace('},{"from":0,"to":2', '}{"from":0,"to":2', 1)),
                  ("a bad escape", text.replace('"path":"NV18"', '"path":"NV\\x18"', 1)),
                  ("a control character", text.replace('"path":"NV18"', '"path":"NV\t18"', 1)),
                  ("a real index", text.replace('{"from":0,"to":2', '{"from":0,"to":2.0', 1)),
                  ("a cut", text[:text.index('"pairs":[{"from":0') + 40]),
                  ("a matrix's trailing comma", text.replace('[0,18,18,18,18,18,18,18]', '[0,18,18,18,18,18,18,18,]', 1)),
                  ("a short matrix row", text.replace('[0,18,18,18,18,18,18,18]', '[0,18,18,18,18,18,18]', 1)),
                  ("a matrix row too many", text.replace('[0,18,18,18,18,18,18,18]', '[0,18,18,18,18,18,18,18],[0,18,18,18,18,18,18,18]', 1)),
                  ("a negative matrix entry", text.replace('[0,18,18,18,18,18,18,18]', '[0,-18,18,18,18,18,18,18]', 1)),
                  ("a matrix entry 18.0", text.replace('[0,18,18,18,18,18,18,18]', '[0,18.0,18,18,18,18,18,18]', 1))):
    refused(what, bad, "fast-bad.json", "a file")

# 15: a FIFO is refused at once.
fifo = os.path.join(TMP, "expect.fifo")
os.mkfifo(fifo)
st, out, err = run("check", "--expect", fifo, "--replay", T + "/hgx-h100-8.json", timeout=20)
check(st == 3 and "not a regular file" in out, "15: a FIFO is refused (%s: %s%s)" % (st, out, err))
st, out, err = run("check", "--expect", "/dev/zero", "--replay", T + "/hgx-h100-8.json", timeout=20)
check(st == 3 and "not a regular file" in out, "15: a device is refused (%s: %s%s)" % (st, out, err))
# A sparse file of NULs (or anything not starting as an object) is refused
# before it is read: nothing of its size is allocated.
sparse = os.path.join(TMP, "sparse.json")
with open(sparse, "wb") as f:
    f.truncate(400 << 20)
before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
st, out, err = run("check", "--expect", sparse, "--replay", T + "/hgx-h100-8.json", timeout=60)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
check(st == 3 and "does not start with '{'" in out and peak < max(before, 200 * 1024),
      "15: a sparse file of 400 MiB is refused unread, peak %d KiB (%s: %s)" % (peak, st, out))
os.unlink(sparse)

# 20: names cannot forge performance data or lines.
exp = load(EXPECT)
for r in exp["results"]:
    r["devices"][3]["name"] = "H100 | forged=1;;;0\nOK: all good"
st, out, _ = run("check", "--expect", write("forged.json", exp), "--replay", T + "/hgx-h100-8.json")
check(st == 2 and "forged=1" in out and "\nOK: all good" not in out, "20: a forged model name (%s)" % st)
nagios_ok(out, "20: a forged model name")
exp = load(EXPECT)
for r in exp["results"]:
    r["devices"][3]["pci_bus_id"] = "0000:5d:00.0|x=1\r\nCRITICAL: forged"
    r["device_type"] = r["device_type"]
st, out, _ = run("check", "--expect", write("forged-bus.json", exp), "--replay", T + "/hgx-h100-8-lost-gpu.json")
check(st == 2 and "\nCRITICAL: forged" not in out, "20: a forged bus id (%s)" % st)
nagios_ok(out, "20: a forged bus id")
exp = load(EXPECT)
exp["results"][0]["connection_type"] = "nv|link\nOK"
st, out, _ = run("check", "--expect", write("forged-conn.json", exp), "--replay", T + "/hgx-h100-8.json")
nagios_ok(out, "20: a forged connection type")
rec = load(T + "/hgx-h100-8.json")
text = json.dumps(rec).replace("NVIDIA H100 80GB HBM3", "NVIDIA H100 | x=1\\nOK: y", 1)
st, out, _ = run("check", "--expect", EXPECT, "--replay", write("forged-node.json", text))
check(st == 2 and "model differs" in out, "20: a node whose name holds '|' and a newline (%s: %s)" % (st, out))
nagios_ok(out, "20: a forged name on the node")

# The results' pairs, read from the text, are refused where Jansson (as it
# reads the rest of the file, JSON_REJECT_DUPLICATES) would refuse them.
exp = load(EXPECT)
text = json.dumps(exp, separators=(",", ":"))
pair = '{"from":0,"to":1,'
for what, bad in (("a repeated key", text.replace('"nvlink_gbps":450.0', '"nvlink_gbps":1.0,"nvlink_gbps":9999.0', 1)),
                  ("a repeated index", text.replace(pair, '{"from":0,"from":3,"to":1,', 1)),
                  ("a key repeated through an escape", text.replace(pair, '{"from":0,"to":1,"t\\u006f":1,', 1)),
                  ("a real beyond a double", text.replace('"nvlink_gbps":450.0', '"nvlink_gbps":1e400', 1)),
                  ("a negative one", text.replace('"nvlink_gbps":450.0', '"nvlink_gbps":-1e400', 1)),
                  ("an integer of 2^63", text.replace('"nvlink_links":18', '"nvlink_links":9223372036854775808', 1)),
                  ("a real of 400 digits", text.replace('"nvlink_gbps":450.0', '"nvlink_gbps":1%s.0' % ("0" * 400), 1)),
                  ("a NUL in a key", text.replace(pair, '{"from":0,"to\\u0000x":1,"to":1,', 1)),
                  ("a NUL in a string", text.replace('"path":"NV18"', '"path":"NV\\u0000"', 1)),
                  ("a lone surrogate", text.replace('"path":"NV18"', '"path":"NV\\ud800"', 1)),
                  ("a low surrogate first", text.replace('"path":"NV18"', '"path":"NV\\udc00\\ud800"', 1))):
    refused(what, bad, "pair-bad.json", "a pair")
for what, raw in (("a byte that is not UTF-8", b"NV\xff"), ("an overlong form", b"NV\xc0\xaf"),
                  ("a cut character", b"NV\xe2\x80")):
    path = os.path.join(TMP, "pair-bytes.json")
    with open(path, "wb") as f:
        f.write(text.encode().replace(b'"path":"NV18"', b'"path":"' + raw + b'"', 1))
    st, out, _ = run("check", "--expect", path, "--replay", T + "/hgx-h100-8.json")
    check(st == 3 and out.startswith("DMACONN UNKNOWN - cannot use --expect"),
          "13: a pair with %s is an invalid file (%s: %s)" % (what, st, out))
good = text.replace('"path":"NV18"', '"path":"NV\\ud83d\\ude00 \u00e9"', 1)
good = good.replace('"nvlink_links":18', '"nvlink_links":9223372036854775807', 1)
st, out, _ = run("check", "--expect", write("pair-unicode.json", good), "--replay", T + "/hgx-h100-8.json")
check(st == 0, "13: a pair with a surrogate pair, UTF-8 and 2^63-1 is read (%s: %s)" % (st, out))

# 20: --json stays one valid JSON object, and the text report UTF-8 without
# C1 controls, whatever the names hold: bytes that are not UTF-8 (a file
# name, an option, -d), a name cut by the report's length, a C1 CSI.
def json_report(args, what):
    p = subprocess.run([CLI] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_of(), timeout=60)
    try:
        doc = json.loads(p.stdout.decode("utf-8"))
        ok = (p.stdout.count(b"\n") == 1 and isinstance(doc.get("summary"), str) and doc["findings"] and
              all(isinstance(f.get("text"), str) for f in doc["findings"]))
    except ValueError:
        ok = False
    check(ok, "20: --json, %s: one object with a summary and every finding's text (%r)" % (what, p.stdout[:300]))
    return p.returncode


json_report(["check", "--expect", b"/nonexistent/\xff\x9b.json", "--json"], "a file name not UTF-8")
json_report(["check", b"--bogus\xff", "--json"], "an unknown option not UTF-8")
json_report(["check", "--expect", EXPECT, "-d", b"cu\xffda", "-c", "nvlink", "--json"], "a -d not UTF-8")
json_report(["check", "--expect-links", "1", "-d", b"cu\xffda", "-c", "nvlink", "--json"], "a rule's -d not UTF-8")
for cut in range(3):
    exp = load(EXPECT)
    for r in exp["results"]:
        r["devices"][0]["name"] = "x" * cut + "\u00e9" * 1500
    path = write("long-name.json", exp)
    st = json_report(["check", "--expect", path, "--replay", T + "/hgx-h100-8.json", "--json"],
                     "a name cut by the report's length (%d)" % cut)
    p = subprocess.run([CLI, "check", "--expect", path, "--replay", T + "/hgx-h100-8.json"], stdout=subprocess.PIPE,
                       env=env_of(), timeout=60)
    try:
        p.stdout.decode("utf-8")
        utf8 = True
    except ValueError:
        utf8 = False
    check(st == 2 and p.returncode == 2 and utf8, "20: the text report of a cut name is UTF-8 (%s, %s)" % (st, utf8))
exp = load(EXPECT)
for r in exp["results"]:
    r["devices"][3]["name"] = "H100 \u009b31mred \u0085x \u2028y"
st, out, _ = run("check", "--expect", write("c1.json", exp), "--replay", T + "/hgx-h100-8.json")
check(st == 2 and "\u009b" not in out and "\u0085" not in out and "H100 ?31mred ?x \u2028y" in out,
      "20: C1 controls in a name become '?' (%s: %r)" % (st, out[:300]))

shutil.rmtree(TMP, ignore_errors=True)
sys.exit(report.done())
