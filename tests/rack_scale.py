#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A rack through the CLI, on the stand-in NVML of tests/fake_nvml_nvl.c.

Usage: rack_scale.py BUILD_DIR

N = 72 x DMACONN_TEST_SIZE GPUs (an NVL72 rack; DMACONN_TEST_SIZE=8 is the
576 of the scale goals), every pair joined through NVSwitches:

- cuda/nvlink and cuda/p2p live, then `--record` and `--replay` of the
  recording: the same JSON documents;
- the recording stores the per-pair facts as rows (format version 2): its
  size grows with N, not N*N (at most 2 KB per device and 64 KB more);
- replaying it, the CLI's peak RSS stays within 32 MB + 200 bytes per pair
  (wait4's ru_maxrss of the child, which includes this script's own at the
  fork: an upper bound);
- a GPU in MIG mode lists its instances: CUDA_VISIBLE_DEVICES naming one
  gives that one device (its UUID, its GPU's bus id and UUID), live and
  replayed from the recording; a second instance ends the list;
- GPUs of 36 NVLinks (NVLink 6, DMACONN_FAKE_NVML_LINKS=36) count all 36,
  in one batch of field values and link by link, and record as 36 links;
  GPUs of 18 record as 18.

Prints "ok NAME" / "FAIL NAME: why" and "N passed, M failed".
DMACONN_TEST_WRAPPER is put in front of the CLI (valgrind runs; the memory
bound is then not checked, the peak being valgrind's).
"""

import json
import os
import subprocess
import sys
import tempfile

from harness import Report, cli_command, clean_env, wrapper

TIMEOUT = float(os.environ.get("DMACONN_TEST_TIMEOUT", "300"))


class Suite(Report):
    def __init__(self, build):
        super().__init__()
        self.wrapper = wrapper()
        self.cli = cli_command(build)
        self.fake = os.path.join(os.path.abspath(build), "tests", "fakenvml", "libnvidia-ml.so.1")

    def run(self, args, env_extra):
        env = clean_env({"DMACONN_NVML_LIBRARY": self.fake})
        env.update(env_extra)
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            p = subprocess.Popen(self.cli + args, env=env, stdout=out, stderr=err)
            try:
                _, status, usage = os.wait4(p.pid, 0)
            except BaseException:
                p.kill()
                raise
            out.seek(0)
            err.seek(0)
            return os.waitstatus_to_exitcode(status), out.read(), err.read(), usage.ru_maxrss

    def round_trip(self, n, tmp):
        problems = []
        env = {"DMACONN_FAKE_NVML_GPUS": str(n)}
        path = os.path.join(tmp, "rack-%d.json" % n)
        rc, _, err, _ = self.run(["--record", path], env)
        if rc != 0:
            return self.problems("round_trip", ["--record: exit %d: %r" % (rc, err[-600:])])
        with open(path) as f:
            recorded = json.load(f)
        rows = [d.get("p2p_row") for d in recorded["nvml"]["devices"]]
        if recorded.get("dmaconn_topology") != 2 or None in rows or "p2p_answers" not in recorded["nvml"]:
            problems.append("the recording has no version 2 rows: version %r, %d rows" % (
                recorded.get("dmaconn_topology"), len([r for r in rows if r is not None])))
        size = os.path.getsize(path)
        if size > 2048 * n + 65536:
            problems.append("the recording of %d GPUs takes %d bytes, more than 2 KB per GPU" % (n, size))
        for conn in ("nvlink", "p2p"):
            # The replay first: Linux keeps the peak of the process a child
            # was forked from, and this one grows parsing the documents.
            rc2, replayed, err2, peak_kb = self.run(["--replay", path, "-d", "cuda", "-c", conn, "--json"], {})
            rc1, live, err1, _ = self.run(["-d", "cuda", "-c", conn, "--json"], env)
            if rc1 != 0 or rc2 != 0:
                problems.append("%s: exit %d live, %d replayed: %r" % (conn, rc1, rc2, (err1 + err2)[-600:]))
                continue
            a, b = json.loads(live), json.loads(replayed)
            if a != b:
                problems.append("%s: the replay differs from the live run" % conn)
            if len(a["results"][0]["matrix"]) != n:
                problems.append("%s: %d devices, expected %d" % (conn, len(a["results"][0]["matrix"]), n))
            bound_kb = 32 * 1024 + 200 * n * n // 1024
            if not self.wrapper and peak_kb > bound_kb:
                problems.append("%s: replaying %d GPUs peaks at %d KB, more than %d KB" % (conn, n, peak_kb, bound_kb))
            print("  %s, %d GPUs: recording %d bytes, replay peak %d KB" % (conn, n, size, peak_kb))
        self.problems("round_trip", problems)

    def mig(self, tmp):
        problems = []
        env = {"DMACONN_FAKE_NVML_GPUS": "4", "DMACONN_FAKE_NVML_MIG": "1"}
        path = os.path.join(tmp, "mig.json")
        rc, _, err, _ = self.run(["--record", path], env)
        if rc != 0:
            return self.problems("mig", ["--record: exit %d: %r" % (rc, err[-600:])])
        first = "MIG-fa4e0000-0001-5000-8000-000000000000"
        second = "MIG-fa4e0000-0001-5000-8000-000000000001"
        cases = [(first, [first]), ("2,%s,0" % second, [None, second, None]),
                 ("%s,%s,0" % (first, second), [first]), ("MIG-GPU-fa4e0000-0000-4000-8000-000000000001/2/0", [second]),
                 ("MIG-fa4e0000-0001-5000-8000-00000000000f,0", [])]
        for cvd, want in cases:
            for how, args, extra in (("live", [], env), ("replayed", ["--replay", path], {"DMACONN_REPLAY_LIVE_ENV": "1"})):
                rc, out, err, _ = self.run(args + ["-d", "cuda", "-c", "nvlink", "--json"],
                                           dict(extra, CUDA_VISIBLE_DEVICES=cvd))
                if rc != 0:
                    problems.append("%s %s: exit %d: %r" % (how, cvd, rc, err[-600:]))
                    continue
                devs = json.loads(out)["results"][0]["devices"]
                got = [d["uuid"] if d.get("mig") == "instance" else None for d in devs]
                if got != want:
                    problems.append("%s %s: devices %r, expected %r" % (how, cvd, got, want))
                for d in devs:
                    if d.get("mig") == "instance" and (d.get("pci_bus_id") != "0000:11:00.0" or
                                                       d.get("mig_parent_uuid") != "GPU-fa4e0000-0000-4000-8000-000000000001"):
                        problems.append("%s %s: instance %r lacks its GPU" % (how, cvd, d))
        self.problems("mig", problems)


    def links(self, tmp, links):
        """`links` per GPU: all of them count (none past the 18 of older
        GPUs is left out) and the recording keeps no more (the links asked
        past a GPU's last, up to NVML_NVLINK_MAX_LINKS, are not written)."""
        problems = []
        n = 4
        env = {"DMACONN_FAKE_NVML_GPUS": str(n), "DMACONN_FAKE_NVML_LINKS": str(links)}
        want = [[0 if i == j else links for j in range(n)] for i in range(n)]
        path = os.path.join(tmp, "links%d.json" % links)
        rc, _, err, _ = self.run(["--record", path], env)
        if rc != 0:
            return self.problems("links%d" % links, ["--record: exit %d: %r" % (rc, err[-600:])])
        outs = []
        for how, args, extra in (("batch", [], env), ("link by link", [], dict(env, DMACONN_NVML_NO_BATCH="1")),
                                 ("replayed", ["--replay", path], {})):
            rc, out, err, _ = self.run(args + ["-d", "cuda", "-c", "nvlink", "--json"], extra)
            if rc != 0:
                problems.append("%s: exit %d: %r" % (how, rc, err[-600:]))
                continue
            r = json.loads(out)["results"][0]
            if r["matrix"] != want:
                problems.append("%s: matrix %r, expected %d links per pair" % (how, r["matrix"], links))
            counts = [d.get("nvlink_active_links") for d in r["devices"]]
            if counts != [links] * n:
                problems.append("%s: nvlink_active_links %r" % (how, counts))
            outs.append(r)
        if len(outs) == 3 and outs[2] != outs[0]:
            problems.append("the replay of the recording differs from the live run")
        with open(path) as f:
            devs = json.load(f)["nvml"]["devices"]
        kept = [sum(e.get("repeat", 1) for e in d.get("nvlink", [])) for d in devs]
        if kept != [links] * n:
            problems.append("the recording keeps %r links per GPU, expected %d" % (kept, links))
        self.problems("links%d" % links, problems)


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    s = Suite(argv[1])
    n = 72 * max(1, int(os.environ.get("DMACONN_TEST_SIZE", "1") or 1))
    with tempfile.TemporaryDirectory(prefix="dmaconn-rack-") as tmp:
        s.round_trip(n, tmp)
        s.mig(tmp)
        s.links(tmp, 36)
        s.links(tmp, 18)
    return s.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
