#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""NVLink health as NVIDIA's rules have it (docs.nvidia.com/health-validation,
NVSentinel, NVIDIA/DCGM#198), on hand-written replays of what NVML answers:

  - NVML's per-link speed (NVML_FI_DEV_NVLINK_GET_SPEED) is read for every
    active link, batched or link by link, kept through --record, and shown
    as the device property nvlink_speeds_mbps ("0-4:53125,5:26562,...");
  - `dmaconn check` alone, and with --expect, --expect-links or
    --fully-connected: an active link below its generation's speed
    (GB200/GB300 53125 MB/s, H100/H200 26562) is CRITICAL, the fabric's
    health mask saying bandwidth degraded a WARNING, route unhealthy or a
    registration that completed without success CRITICAL, links down that
    another GPU of the model has active CRITICAL;
  - a PCIe-only A100 (12 inactive NVLink ports per GPU) is OK with no NVLink
    finding, an idle GB300 tray without IMEX is OK, no GPU is UNKNOWN;
  - multicast 0 where --expect-multicast or the good node's cuda/multicast
    result says 1 is CRITICAL, with the pair's reason (one line per reason).

Each case asserts the exit status and the finding lines.

Usage: health_test.py BUILD_DIR   (run from the source root)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from harness import CliRun, Report  # noqa: E402

C = CliRun(sys.argv[1], "health")
TMP, run, write = C.tmp, C.run, C.write
T = "tests/topologies"
report = Report()
check = report.check


def devices(topology, **extra):
    st, out, _ = run("--replay", topology, "-d", "cuda", "-c", "nvlink", "--json", **extra)
    try:
        return json.loads(out)["results"][0]["devices"]
    except (ValueError, KeyError, IndexError):
        return []


# --- nvlink_speeds_mbps: NVML's per-link speed, every active link.
SLOW = T + "/gb200-tray-slow-link.json"
want = ["0-17:53125", "0-17:53125", "0-4:53125,5:26562,6-17:53125", "0-17:53125"]
for extra in ({}, {"DMACONN_NVML_NO_BATCH": "1"}):
    got = [d.get("nvlink_speeds_mbps") for d in devices(SLOW, **extra)]
    check(got == want, "speeds of every active link (%s): %s" % (extra or "batched", got))
got = [d.get("nvlink_speeds_mbps") for d in devices(T + "/h200x2.json")]
check(got == ["0-17:26562"] * 2, "the recorded H200 pair: 26562 MB/s on links 0-17: %s" % got)
# Inactive links and links NVML gives no speed for are not listed.
got = [d.get("nvlink_speeds_mbps") for d in devices(T + "/a100-pcie-4.json")]
check(got == [None] * 4, "no active link, no speeds: %s" % got)
got = [d.get("nvlink_speeds_mbps") for d in devices(T + "/hgx-h100-8.json")]
check(got == [None] * 8, "a recording without speeds has none: %s" % got)
# Recorded and replayed again: the same speeds.
rec = os.path.join(TMP, "slow.json")
st, _, err = run("--replay", SLOW, "--record", rec)
got = [d.get("nvlink_speeds_mbps") for d in devices(rec)]
check(st == 0 and got == want, "--record keeps every link's speed (%s %s): %s" % (st, err.strip(), got))


# --- dmaconn check: the rules, without an expectation and with one.
def findings(out):
    return [l for l in out.split("\n")[1:] if l]


def health(name, args, status, lines, first=None):
    st, out, err = run("check", *args)
    got = findings(out)
    check(st == status and got == lines and (first is None or out.startswith(first)),
          "%s: exit %s (want %s), findings %s, first line %r, stderr %r"
          % (name, st, status, got, out.split("\n")[0][:160], err[:200]))


SLOW_LINE = ("CRITICAL: cuda: GPU 2 (0018:01:00.0): link 5 at 26562 MB/s, below the 53125 MB/s of its NVLink "
             "generation (compute capability 10.0)")
health("GB200 link at half rate", ["--replay", SLOW], 2, [SLOW_LINE], "DMACONN CRITICAL - cuda: GPU 2 (0018:01:00.0)")
health("GB200 link at half rate, --expect-links 18", ["--expect-links", "18", "--replay", SLOW], 2, [SLOW_LINE])
health("GB200 link at half rate, --fully-connected", ["--fully-connected", "--replay", SLOW], 2, [SLOW_LINE])
# A good node's file made on the slow node itself does not excuse it.
st, same, _ = run("--replay", SLOW, "--json")
health("GB200 link at half rate, --expect itself", ["--expect", write("slow.expect.json", json.loads(same)), "--replay",
       SLOW], 2, [SLOW_LINE])
health("a healthy GB300 tray against the slow GB200 tray's file: only the models differ", ["--expect", os.path.join(TMP, "slow.expect.json"), "--replay",
       T + "/gb300-tray-idle.json", "-d", "cuda", "-c", "p2p"], 2,
       ["CRITICAL: cuda: GPU 0 (0008:01:00.0): model differs: expected NVIDIA GB200, found NVIDIA GB300",
        "CRITICAL: cuda: GPU 1 (0009:01:00.0): model differs: expected NVIDIA GB200, found NVIDIA GB300",
        "CRITICAL: cuda: GPU 2 (0018:01:00.0): model differs: expected NVIDIA GB200, found NVIDIA GB300",
        "CRITICAL: cuda: GPU 3 (0019:01:00.0): model differs: expected NVIDIA GB200, found NVIDIA GB300"])
# Every link of a GPU slow: one run.  From the recorded H200 pair.
h200 = json.load(open(T + "/h200x2.json"))
h200["nvml"]["devices"][1]["nvlink"][0]["speed_mbps"] = 13281
health("H200 whose every link runs at half rate", ["--replay", write("h200-half.json", h200)], 2,
       ["CRITICAL: cuda: GPU 1 (0000:00:07.0): links 0-17 at 13281 MB/s, below the 26562 MB/s of its NVLink "
        "generation (compute capability 9.0)"])
health("the recorded H200 pair", ["--replay", T + "/h200x2.json"], 0, [],
       "DMACONN OK - 2 devices healthy (cuda/nvlink: NVLink health rules) | devices=2;")
# A generation the table does not list is not judged.
h200["nvml"]["devices"][1]["cuda_compute_capability"] = [12, 0]
health("a generation without a known rate", ["--replay", write("h200-cc12.json", h200)], 0, [])

health("GB200 tray with degraded bandwidth", ["--replay", T + "/gb200-tray-degraded-bw.json"], 1,
       ["WARNING: cuda: GPU 1 (0009:01:00.0): NVSwitch fabric bandwidth degraded (health mask 0x121, summary "
        "limited_capacity)"], "DMACONN WARNING - ")
st, out, _ = run("check", "--replay", "tests/topologies-reasons/fabric-unhealthy.json")
check(st == 2 and any("NVSwitch fabric route unhealthy (health mask 0x112" in l and l.startswith("CRITICAL: ")
                      for l in findings(out)), "route unhealthy is CRITICAL (%s): %s" % (st, findings(out)))
health("fabric completed without success", ["--replay", T + "/fabric-failed.json"], 2,
       ["CRITICAL: cuda: GPU 0 (0000:18:00.0): NVSwitch fabric registration completed with NVML_ERROR_UNKNOWN"])
health("fabric registration in progress", ["--replay", T + "/hgx-h100-8-fabric-in-progress.json"], 1,
       ["WARNING: cuda: GPU 6 (0000:ba:00.0): NVSwitch fabric registration still in progress (expected completed); "
        "its pairs count once it completes"])
health("links down that the model's other GPUs have active", ["--replay", T + "/hgx-h100-8-degraded.json"], 2,
       ["CRITICAL: cuda: GPU 3 (0000:5d:00.0): links 5 and 11 down"])

# PCIe-only A100: 12 inactive NVLink ports per GPU, no NVLink finding.
for args in ([], ["--json"]):
    st, out, _ = run("check", "--replay", T + "/a100-pcie-4.json", *args)
    if args:
        doc = json.loads(out) if out.startswith("{") else {}
        check(st == 0 and doc.get("status") == "OK" and doc.get("findings") == [],
              "PCIe-only A100, --json: OK without findings (%s): %s" % (st, out[:300]))
    else:
        check(st == 0 and out == "DMACONN OK - 4 devices healthy (cuda/nvlink: NVLink health rules) | devices=4;;;0 "
              "critical=0;;;0 warning=0;;;0 unknown=0;;;0\n" and "NVLink" not in "".join(findings(out)),
              "PCIe-only A100: OK, no NVLink finding (%s): %r" % (st, out))
# An idle GB300 tray: no IMEX channel, no job; a single node needs none.
health("idle GB300 tray without IMEX", ["--replay", T + "/gb300-tray-idle.json"], 0, [],
       "DMACONN OK - 4 devices healthy")
# --- multicast: --expect-multicast, or a good node's cuda/multicast result.
MC = "tests/topologies-multicast"
health("--expect-multicast on a healthy HGX H100", ["--expect-multicast", "--replay", MC + "/hgx-h100-healthy.json"], 0,
       [], "DMACONN OK - 8 devices as expected (cuda/nvlink, cuda/multicast) |")
health("--expect-multicast on an idle GB300 tray without IMEX",
       ["--expect-multicast", "--replay", T + "/gb300-tray-idle.json"], 0, [])
NOT_STARTED = "fabric_not_started: GPU %d is not registered with the NVSwitch fabric (state not started: is the " \
              "fabric manager running?)"
health("--expect-multicast, fabric manager not started", ["--expect-multicast", "--replay", MC + "/fm-not-started.json"],
       2, ["CRITICAL: cuda: GPU %d (%s): NVSwitch fabric state expected completed, found not_started" % (k, b)
           for k, b in enumerate(["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0", "0000:9a:00.0",
                                  "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"])] +
       ["CRITICAL: cuda/multicast GPU %d (%s) <-> GPU %d (%s)%s: multicast expected, found 0 (%s)"
        % (k, a, k + 1, b, " and %d more pair%s" % (6 - k, "" if k == 5 else "s") if k < 6 else "", NOT_STARTED % k)
        for k, (a, b) in enumerate(zip(["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0", "0000:9a:00.0",
                                        "0000:ab:00.0", "0000:ba:00.0"],
                                       ["0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0", "0000:9a:00.0", "0000:ab:00.0",
                                        "0000:ba:00.0", "0000:db:00.0"]))])
for name, code in (("insufficient-resources", "fabric_failed"), ("h200-nvl-bridged", "no_nvswitch"),
                   ("confidential-computing", "confidential_computing"), ("route-unhealthy", "fabric_unhealthy")):
    st, out, _ = run("check", "--expect-multicast", "--replay", "%s/%s.json" % (MC, name))
    mc = [l for l in findings(out) if l.startswith("CRITICAL: cuda/multicast ")]
    check(st == 2 and mc and all(": multicast expected, found 0 (%s: " % code in l for l in mc),
          "--expect-multicast, %s: CRITICAL with %s (%s): %s" % (name, code, st, mc[:2]))
# A good node's file holds cuda/multicast: a pair it has at 1 and now at 0 is CRITICAL, with the reason.
st, good, _ = run("--replay", MC + "/hgx-h100-healthy.json", "--json")
expect = write("hgx-h100-multicast.expect.json", json.loads(good))
st, out, _ = run("check", "--expect", expect, "--replay", MC + "/insufficient-resources.json")
mc = [l for l in findings(out) if "cuda/multicast" in l]
check(st == 2 and len(mc) == 7 and all(l.startswith("CRITICAL: cuda/multicast GPU ") and
                                      l.endswith(": lost pair: expected 1, found 0 (fabric_failed)") for l in mc),
      "--expect a file with cuda/multicast 1: the lost pairs are CRITICAL with their reason (%s): %s" % (st, mc))
st, out, _ = run("check", "--expect", expect, "--replay", MC + "/hgx-h100-healthy.json")
check(st == 0, "--expect the same healthy node: OK (%s): %r" % (st, out[:200]))

# No GPU: nothing was checked, which is not a pass.
st, out, _ = run("check", "--replay", T + "/no-gpus.json")
check(st == 3 and "no devices found: nothing to check" in out, "no GPU is UNKNOWN (%s): %r" % (st, out))

sys.exit(report.done())
