#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The AMD detectors (rocm/infinity_fabric, rocm/p2p) through the CLI.

Usage: run_rocm_cases.py BUILD_DIR TESTS_BUILD_DIR [FILTER]

BUILD_DIR holds the `dmaconn` executable; TESTS_BUILD_DIR holds the stand-in
ROCm SMI libraries (fakersmi-{full,nominmax,nolinktype}/librocm_smi64.so.1).
FILTER selects cases by substring of their name.

Each case of tests/topologies-rocm/cases.json runs `dmaconn -d rocm -c
CONNECTION --json` in a clean environment (every DMACONN_*, FAKE_RSMI_* and
device-ordering variable removed, then the case's "env"; "$FAKE_FULL",
"$FAKE_NOMINMAX", "$FAKE_NOLINKTYPE" stand for the stand-in libraries).
A case names either "topology" (a replay file with a "files" section) or
"sysfs" (a directory for DMACONN_SYSFS_ROOT).  A topology case runs twice:
replayed, and live on the same files written out as a directory under
DMACONN_SYSFS_ROOT; both runs must print the same JSON, then meet the
expectations ("modes": ["sysfs"] runs only the second, as the ROCm SMI
cross-check does not run under a replay).  The expectations are those of
every replay case (tests/replay_cases.py); "$FAKE_*" in warnings_equal
stands for the library's path too.  No run may leave the stand-in library unbalanced (rsmi_init
without rsmi_shut_down).

Then fixed checks: recording a live tree and a replay round-trips through
the "files" section, and malformed "files" sections are refused with their
path named; `--topo -d rocm` prints the AMD table and legend; and the
committed trees are gen.py's output.  Prints "ok NAME" / "FAIL NAME: why" and "N passed, M failed".
DMACONN_TEST_WRAPPER is put in front of the CLI (valgrind runs).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import replay_cases
from harness import Report, cli_command, clean_env

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CASES = os.path.join(HERE, "topologies-rocm", "cases.json")
TIMEOUT = float(os.environ.get("DMACONN_TEST_TIMEOUT", "300"))


class Runner(Report):
    def __init__(self, build, tests_build):
        super().__init__()
        self.cmd = cli_command(build)
        self.fakes = {"$FAKE_" + v.upper(): os.path.join(os.path.abspath(tests_build),
                                                          "fakersmi-" + v, "librocm_smi64.so.1")
                      for v in ("full", "nominmax", "nolinktype")}
        self.tmp = tempfile.mkdtemp(prefix="dmaconn-rocm-")
        self.trees = {}

    def env(self, extra):
        env = clean_env({"DMACONN_QUIET": "1"})
        env = {k: v for k, v in env.items() if not k.startswith("FAKE_RSMI_")}
        for k, v in (extra or {}).items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = self.fakes.get(v, v)
        return env

    def run(self, args, env):
        p = subprocess.run(self.cmd + args, env=env, cwd=REPO, capture_output=True, text=True,
                           timeout=TIMEOUT)
        return p.returncode, p.stdout, p.stderr

    def tree(self, topology):
        """The topology's files written out as a directory (once)."""
        if topology not in self.trees:
            with open(os.path.join(REPO, topology)) as f:
                files = json.load(f)["files"]
            root = os.path.join(self.tmp, os.path.basename(topology)[:-5])
            for path, data in files.items():
                os.makedirs(os.path.dirname(root + path), exist_ok=True)
                with open(root + path, "w") as out:
                    out.write(data)
            self.trees[topology] = root
        return self.trees[topology]

    # ------------------------------------------------------------- cases

    def detect(self, conn, env):
        """(the result or None, problems, standard error)"""
        rc, out, err = self.run(["-d", "rocm", "-c", conn, "--json"], env)
        if rc != 0:
            return None, ["exit status %d; stderr: %s" % (rc, err.strip()[:2000])], err
        problems = ["stderr: " + l for l in err.splitlines() if l.startswith("fake_rocm_smi:")]
        problems += ["valgrind: " + l for l in err.splitlines() if l.startswith("==")]
        try:
            return json.loads(out)["results"][0], problems, err
        except (ValueError, KeyError, IndexError, TypeError) as e:
            return None, problems + ["not JSON (%s): %s" % (e, out[:500])], err

    def case(self, c):
        conn = c.get("connection", "infinity_fabric")
        modes = c.get("modes", ["replay", "sysfs"] if "topology" in c else ["sysfs"])
        results, problems = [], []
        for mode in modes:
            env = dict(c.get("env", {}))
            if mode == "replay":
                env["DMACONN_REPLAY"] = os.path.join(REPO, c["topology"])
            else:
                env["DMACONN_SYSFS_ROOT"] = self.tree(c["topology"]) if "topology" in c else \
                    os.path.join(REPO, c["sysfs"])
            obj, p, err = self.detect(conn, self.env(env))
            problems += ["%s: %s" % (mode, x) for x in p]
            if obj is not None:
                results.append((mode, obj, err))
        if len(results) == 2 and results[0][1] != results[1][1]:
            problems.append("replay and sysfs results differ:\n    %s\n    %s"
                            % (json.dumps(results[0][1])[:1500], json.dumps(results[1][1])[:1500]))
        if results:
            problems += self.expect(c, conn, results[-1][1], results[-1][2])
        self.problems(c["name"], problems)

    def expect(self, c, conn, r, err):
        want_warns = c.get("warnings_equal", [])
        for k, v in self.fakes.items():
            want_warns = [w.replace(k, v) for w in want_warns]
        case = dict(c, connection=conn, warnings_equal=want_warns)
        return replay_cases.check(case, r, err, "rocm", quiet=True)

    # ------------------------------------------------------ fixed checks

    def record_live(self, name, root):
        """A live tree recorded, then replayed: the same results.  The recording
        keeps what the detectors read: each file as on disk, every GPU node's
        properties and links among them, no CPU node's links."""
        problems = []
        rec = os.path.join(self.tmp, name + "-rec.json")
        rc, _, err = self.run(["--record", rec], self.env({"DMACONN_SYSFS_ROOT": root}))
        if rc != 0:
            self.problems("record " + name, ["exit %d: %s" % (rc, err)])
            return
        with open(rec) as f:
            recorded = json.load(f).get("files", {})
        on_disk = {}
        for d, _, names in os.walk(root):
            for fn in names:
                full = os.path.join(d, fn)
                path = full[len(root):]
                if path.startswith("/sys/"):
                    with open(full) as f:
                        on_disk[path] = f.read()
        extra = sorted(p for p in recorded if on_disk.get(p) != recorded[p])[:5]
        if extra:
            problems.append("recorded files not as in the tree: %s" % extra)
        gpus = [p for p, text in on_disk.items() if p.endswith("/properties") and "/io_links/" not in p
                and "/p2p_links/" not in p and "\nsimd_count 0\n" not in "\n" + text]
        missing = sorted(set(gpus) - set(recorded))[:5]
        if not gpus or missing:
            problems.append("GPU nodes not recorded: %s" % (missing or "none in the tree"))
        links = [p for p in recorded if "/io_links/" in p]
        if not links:
            problems.append("no link recorded")
        for conn in ("infinity_fabric", "p2p"):
            live, p1, _ = self.detect(conn, self.env({"DMACONN_SYSFS_ROOT": root}))
            replayed, p2, _ = self.detect(conn, self.env({"DMACONN_REPLAY": rec,
                                                       "DMACONN_SYSFS_ROOT": "/nonexistent"}))
            problems += p1 + p2
            if live != replayed:
                problems.append("%s: the replay of the recording differs from the live tree" % conn)
        self.problems("record " + name, problems)

    def record_replay(self, topology):
        """Recording a replay keeps the files of its "files" section that the
        detectors read, unchanged, and replays the same."""
        rec = os.path.join(self.tmp, "rerecorded.json")
        rc, _, err = self.run(["--replay", os.path.join(REPO, topology), "--record", rec], self.env({}))
        problems = [] if rc == 0 else ["exit %d: %s" % (rc, err)]
        if rc == 0:
            with open(os.path.join(REPO, topology)) as f:
                want = json.load(f)["files"]
            with open(rec) as f:
                got = json.load(f).get("files")
            if not got or any(want.get(p) != v for p, v in got.items()):
                problems.append("the re-recorded files differ")
            for conn in ("infinity_fabric", "p2p"):
                a, p1, _ = self.detect(conn, self.env({"DMACONN_REPLAY": os.path.join(REPO, topology)}))
                b, p2, _ = self.detect(conn, self.env({"DMACONN_REPLAY": rec}))
                problems += p1 + p2
                if a != b:
                    problems.append("%s: the re-recording replays differently" % conn)
        self.problems("re-record " + topology, problems)

    def bad_files(self):
        cases = [
            ("not-object", [], "files: expected an object"),
            ("relative", {"sys/x": ""}, "files.\"sys/x\": the path is not an absolute path"),
            ("dotdot", {"/sys/../x": ""}, "has a '.' or '..' component"),
            ("empty-component", {"/sys//x": ""}, "has an empty component"),
            ("trailing-slash", {"/sys/x/": ""}, "ends with '/'"),
            ("not-string", {"/sys/x": 1}, "files.\"/sys/x\": expected the file's contents, a string"),
            ("file-and-dir", {"/sys/x": "a", "/sys/x/y": "b"},
             "files.\"/sys/x\": is a file, yet other paths are below it"),
            ("too-big", {"/sys/x": "a" * 70000}, "larger than 65536 bytes"),
        ]
        for name, files, message in cases:
            path = os.path.join(self.tmp, "bad-%s.json" % name)
            with open(path, "w") as f:
                json.dump({"dmaconn_topology": 1, "files": files}, f)
            rc, out, err = self.run(["--replay", path, "-d", "rocm", "-c", "p2p"], self.env({}))
            problems = []
            if rc != 1:
                problems.append("exit status %d, expected 1" % rc)
            if message not in err:
                problems.append("stderr lacks %r: %s" % (message, err.strip()))
            self.problems("bad files " + name, problems)

    def topo(self):
        """`dmaconn --topo -d rocm`: the path table, the AMD legend, each pair's line."""
        checks = [
            ("mi250x-8", ["rocm topology (replay of %s): 8 devices",
                          # the recording has no CPU or NUMA facts of the GPUs: N/A
                          "GPU0    X        XGMI4    XGMI1    XGMI+    XGMI+    XGMI+    XGMI2    XGMI+    "
                          "N/A           N/A            N/A",
                          "Paths: X = self; XGMI# = # direct XGMI (Infinity Fabric) links; XGMI+ = XGMI",
                          "  GPU0 -> GPU6: DMA yes; XGMI, 2 links, 1 hop, weight 15, 50000-100000 MB/s; "
                          "atomics 32-bit yes, 64-bit yes; coherent yes",
                          "  GPU0 -> GPU3: DMA yes; XGMI, 0 links, 2 hops, weight 30, 50000-0 MB/s; "
                          "atomics 32-bit yes, 64-bit yes; coherent yes"]),
            ("radeon-pcie-4", ["GPU3    PCIE     PCIE     PCIE     X        N/A           N/A            N/A",
                               "  GPU0 -> GPU3: DMA no; PCIE, 2 hops, weight 40, 312-32000 MB/s; "
                               "atomics 32-bit no, 64-bit no; coherent no; reason pcie_atomics_not_routed: "
                               "PCIe atomics are not routed on the path between them (the kernel's link "
                               "flags 0xf: no 32-bit or 64-bit atomics)"]),
        ]
        for name, lines in checks:
            topology = os.path.join("tests", "topologies-rocm", name + ".json")
            rc, out, err = self.run(["--topo", "-d", "rocm", "--replay", topology], self.env({}))
            got = [l.rstrip() for l in out.splitlines()]
            problems = [] if rc == 0 else ["exit %d: %s" % (rc, err)]
            for want in lines:
                want = want % topology if "%s" in want else want
                if want.rstrip() not in got:
                    problems.append("no line %r in:\n%s" % (want, out[:3000]))
            self.problems("topo " + name, problems)

    def fixtures(self):
        """The committed trees are what gen.py writes (no hand edits drift)."""
        out = os.path.join(self.tmp, "gen")
        p = subprocess.run([sys.executable, os.path.join(HERE, "topologies-rocm", "gen.py"), out],
                           capture_output=True, text=True)
        problems = [] if p.returncode == 0 else ["gen.py failed: " + p.stderr]
        for sub in ("topologies-rocm", "sysfs-kfd"):
            for d, _, names in os.walk(os.path.join(out, sub)):
                for fn in names:
                    rel = os.path.relpath(os.path.join(d, fn), out)
                    with open(os.path.join(d, fn), "rb") as a:
                        want = a.read()
                    try:
                        with open(os.path.join(HERE, rel), "rb") as b:
                            got = b.read()
                    except OSError:
                        got = None
                    if got != want:
                        problems.append("%s differs from gen.py's output" % rel)
        self.problems("fixtures are gen.py's output", problems[:10])

    def finish(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        return self.done()


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    r = Runner(argv[1], argv[2])
    flt = argv[3] if len(argv) > 3 else ""
    cases = replay_cases.load(CASES, extra_keys=("modes", "sysfs"))
    for c in cases:
        if flt in c["name"]:
            r.case(c)
    if not flt or "record" in flt:
        r.record_live("mi100-4", os.path.join(REPO, "tests", "sysfs-kfd", "mi100-4"))
        r.record_live("mi300x-cpx", r.tree("tests/topologies-rocm/mi300x-cpx.json"))
        r.record_replay("tests/topologies-rocm/mi250x-8.json")
    if not flt or "bad" in flt:
        r.bad_files()
    if not flt or "topo" in flt:
        r.topo()
    if not flt or "fixtures" in flt:
        r.fixtures()
    return r.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
