#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The operator examples of examples/ops/ on replays of an HGX H100 node.

usage: examples_test.py BUILD_DIR

  - slurm-prolog.sh: 0 on the healthy node; 1 with dmaconn's findings on the
    degraded one, a lost GPU and without a driver; 0 (1 when strict) while
    the fabric registers;
  - dmaconn.nhc: check_dmaconn under NHC's die and log (stand-ins with
    NHC's calling convention: NHC is not packaged in Debian);
  - dmaconn-export.service: its ExecStart= lines, run as systemd would (the
    unit's Environment=, with the paths pointed here), write a textfile that
    promtool accepts and a feature file of valid Kubernetes labels;
    `systemd-analyze verify` accepts the unit and its timer.
"""
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import formats_test as ft  # noqa: E402  (the label rules, promtool)

OPS = os.path.join(REPO, "examples", "ops")
TOPO = os.path.join(HERE, "topologies")
EXPECT = os.path.join(HERE, "check", "hgx-h100-8.expect.json")
check = ft.check

DEGRADED = ["CRITICAL: cuda: GPU 3 (0000:5d:00.0): links 5 and 11 down"] + [
    "CRITICAL: cuda/nvlink GPU %d (%s) <-> GPU 3 (0000:5d:00.0): fewer links: expected 18, found 16" % (i, b)
    for i, b in ((0, "0000:18:00.0"), (1, "0000:2a:00.0"), (2, "0000:3a:00.0"))] + [
    "CRITICAL: cuda/nvlink GPU 3 (0000:5d:00.0) <-> GPU %d (%s): fewer links: expected 18, found 16" % (i, b)
    for i, b in ((4, "0000:9a:00.0"), (5, "0000:ab:00.0"), (6, "0000:ba:00.0"), (7, "0000:db:00.0"))]
DEGRADED_SUMMARY = ("DMACONN CRITICAL - cuda: GPU 3 (0000:5d:00.0): links 5 and 11 down (and 7 more findings) | "
                    "devices=8;;;0 expected_devices=8;;;0 critical=8;;;0 warning=0;;;0 unknown=0;;;0")
LOST = "CRITICAL: cuda: missing GPU: expected GPU 5 (0000:ab:00.0), NVIDIA H100 80GB HBM3, found none"
FABRIC = ("WARNING: cuda: GPU 6 (0000:ba:00.0): NVSwitch fabric registration still in progress (expected "
          "completed); its pairs count once it completes")
NODRIVER = ("UNKNOWN: cuda: detection could not run: NVML did not describe the 8 NVIDIA GPUs: nvmlInit_v2 failed: "
            "Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED); assuming no DMA connectivity (8 devices counted "
            "without NVML)")


def env(cli, replay, **extra):
    e = ft.env()
    e.update(DMACONN=cli, DMACONN_REPLAY=os.path.join(TOPO, replay))
    e.update(extra)
    return e


def prolog(cli):
    script = os.path.join(OPS, "slurm-prolog.sh")
    host = socket.gethostname()

    def run(replay, **extra):
        extra.setdefault("DMACONN_EXPECT", EXPECT)
        return subprocess.run(["sh", script], capture_output=True, text=True, env=env(cli, replay, **extra))

    p = run("hgx-h100-8.json")
    check(p.returncode == 0 and p.stdout == "" and p.stderr == "", "prolog: healthy node: exit 0, silent")
    p = run("hgx-h100-8-degraded.json")
    lines = p.stdout.splitlines()
    check(p.returncode == 1 and lines == [DEGRADED_SUMMARY] + DEGRADED,
          "prolog: GPU 3 at 16 links: exit 1 (%d), the summary, GPU 3's links and its 7 pairs:\n%s" % (p.returncode, p.stdout))
    check(p.stderr == "dmaconn prolog on %s: %s\n" % (host, DEGRADED_SUMMARY), "prolog: one line for slurmd's log")
    p = run("hgx-h100-8-lost-gpu.json")
    check(p.returncode == 1 and LOST in p.stdout.splitlines(), "prolog: lost GPU: exit 1, %r" % LOST)
    p = run("hgx-h100-8-no-driver.json")
    check(p.returncode == 1 and NODRIVER in p.stdout.splitlines(), "prolog: no driver: exit 1 (UNKNOWN)")
    p = run("hgx-h100-8-fabric-in-progress.json")
    check(p.returncode == 0 and FABRIC in p.stdout.splitlines(), "prolog: fabric registering: exit 0, the warning said")
    p = run("hgx-h100-8-fabric-in-progress.json", DMACONN_PROLOG_STRICT="1")
    check(p.returncode == 1, "prolog: fabric registering, DMACONN_PROLOG_STRICT=1: exit 1")
    p = run("hgx-h100-8-nvlink-down.json", DMACONN_EXPECT="/nonexistent/expect.json")
    check(p.returncode == 1 and "CRITICAL: cuda/nvlink GPU 0 (0000:18:00.0) <-> GPU 2 (0000:3a:00.0): lost pair: "
          "expected connectivity, found 0 (nvlink_down)" in p.stdout.splitlines(),
          "prolog: no expectation file: every pair must be connected; NVLinks down: exit 1")


# NHC's own die and log, as its checks call them (die RC MESSAGE).
NHC_STUBS = ('die() { local rc=$1; shift; echo "ERROR:  nhc:  Health check failed:  $*"; return $rc; }; '
             'log() { echo "LOG: $*"; }; ')


def nhc(cli):
    def run(replay, expect=EXPECT):
        cmd = NHC_STUBS + 'source "$1"; check_dmaconn %s' % (shlex.quote(expect) if expect else "")
        return subprocess.run(["bash", "-c", cmd, "nhc", os.path.join(OPS, "dmaconn.nhc")], capture_output=True,
                              text=True, env=env(cli, replay))

    p = run("hgx-h100-8.json")
    check(p.returncode == 0 and p.stdout == "", "nhc: healthy node: check_dmaconn returns 0, silent")
    p = run("hgx-h100-8-degraded.json")
    lines = p.stdout.splitlines()
    check(p.returncode == 1 and lines[-1] == "ERROR:  nhc:  Health check failed:  check_dmaconn:  " + DEGRADED_SUMMARY
          and ["LOG: check_dmaconn:  " + l for l in DEGRADED] == lines[:-1],
          "nhc: degraded: one die line with the summary, each finding logged:\n%s" % p.stdout)
    p = run("hgx-h100-8-lost-gpu.json")
    check(p.returncode == 1 and "LOG: check_dmaconn:  " + LOST in p.stdout.splitlines(), "nhc: lost GPU fails")
    p = run("hgx-h100-8-no-driver.json")
    check(p.returncode == 1 and p.stdout.splitlines()[-1].startswith(
        "ERROR:  nhc:  Health check failed:  check_dmaconn:  DMACONN UNKNOWN - cuda: detection could not run"),
          "nhc: no driver fails (UNKNOWN)")
    p = run("hgx-h100-8-fabric-in-progress.json")
    check(p.returncode == 0 and p.stdout.startswith("LOG: check_dmaconn:  DMACONN WARNING - cuda: GPU 6"),
          "nhc: fabric registering: logged, passes")
    p = run("hgx-h100-8-nvlink-down.json", expect="")
    check(p.returncode == 1, "nhc: without an expectation, NVLinks down fail")


def unit_lines(path, key):
    with open(path) as f:
        return [l.split("=", 1)[1].strip() for l in f if l.startswith(key + "=")]


def systemd(cli):
    service = os.path.join(OPS, "dmaconn-export.service")
    timer = os.path.join(OPS, "dmaconn-export.timer")
    if shutil.which("systemd-analyze"):
        p = subprocess.run(["systemd-analyze", "verify", "--man=no", service, timer], capture_output=True,
                           text=True)
        check(p.returncode == 0, "systemd-analyze verify accepts the unit and the timer%s" % (
            "" if p.returncode == 0 else ": " + p.stderr.strip()))
    else:
        print("skip systemd-analyze verify: not installed")
    check(unit_lines(timer, "Unit") == [] and open(timer).read().count("OnUnitActiveSec=") == 1,
          "the timer starts the service of its name")
    defaults = dict(l.split("=", 1) for l in unit_lines(service, "Environment"))
    check(set(defaults) == {"DMACONN", "TEXTFILE_DIR", "FEATURES_DIR"}, "the unit's Environment= names its paths")
    for replay, links in (("hgx-h100-8.json", 18), ("hgx-h100-8-degraded.json", 16)):
        with tempfile.TemporaryDirectory() as tmp:
            text, feat = os.path.join(tmp, "textfile"), os.path.join(tmp, "features.d")
            os.mkdir(text)
            e = env(cli, replay, TEXTFILE_DIR=text, FEATURES_DIR=feat)
            for line in unit_lines(service, "ExecStart"):
                argv = shlex.split(line.lstrip("-@+!:"))
                p = subprocess.run(argv, capture_output=True, text=True, env=e)
                check(p.returncode == 0, "%s: ExecStart=%s... exits 0 (%s)" % (replay, argv[-1][:40], p.stderr))
            check(sorted(os.listdir(text)) == ["dmaconn.prom"] and sorted(os.listdir(feat)) == ["dmaconn"],
                  "%s: exactly dmaconn.prom and features.d/dmaconn, nothing left half-written" % replay)
            prom = open(os.path.join(text, "dmaconn.prom")).read()
            ft.promtool(prom, "%s textfile" % replay)
            samples = ft.prom_samples(prom)
            got = sorted({int(v) for m, l, v in samples
                          if m == "dmaconn_pair_connectivity" and l["connection"] == "nvlink"})
            check(got == sorted({18, links}), "%s: the textfile's pair links are %s" % (replay, got))
            labels = ft.nfd_labels(open(os.path.join(feat, "dmaconn")).read(), "%s features.d" % replay)
            check(labels.get("feature.node.kubernetes.io/dmaconn-cuda-nvlink-links") == str(links),
                  "%s: features.d/dmaconn says cuda-nvlink-links=%d" % (replay, links))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    cli = os.path.join(sys.argv[1], "dmaconn")
    if not shutil.which("promtool"):
        sys.stderr.write("examples_test: promtool missing (apt-get install prometheus, with its service kept from starting; .ci/run does)\n")
        sys.exit(1 if os.environ.get("CI") else 77)
    prolog(cli)
    nhc(cli)
    systemd(cli)
    sys.exit(ft.report.done())


if __name__ == "__main__":
    main()
