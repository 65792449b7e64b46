#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Hostile input through the CLI: what comes in from sysfs trees and replays.

Usage: hostile_input.py BUILD_DIR

- A DMACONN_SYSFS_ROOT tree whose product_name holds invalid UTF-8 and
  terminal escape sequences: `--json` is strict UTF-8 JSON whose strings hold
  no control characters, and the text output carries no ESC byte.
- A tree with a FIFO where a `properties` (or an NVIDIA GPU's `vendor`) file
  belongs: detection ends (the FIFO is refused, not read), under a timeout.
- A tree whose `properties` is a symbolic link to a private file: nothing of
  that file reaches stdout or stderr.
- A replay of N GPUs without P2P answers (N = 64 x DMACONN_TEST_SIZE): the
  per-pair warning is printed once, with the count of the others.
- A replay whose devices list empty "p2p", "nvlink" and "mig_devices":
  no peers, links or instances, read without undefined behaviour (the
  sanitizer builds abort on it) and shown as a device without peers.
- A replay whose path holds terminal escapes, CR, LF, tab, a C1 control,
  U+2028 and an invalid byte: every output that names the file (text,
  --topo, each --format, what --record says) is valid UTF-8 with no
  control character but its line ends, and no line separator.
- Device names with U+2028/U+2029 (line and paragraph separators) are
  shown with spaces, as a newline in them is, in every output.
- A replay refused for a bus id with escapes and line breaks: the message
  on standard error is one line without a control character.
- CUDA_VISIBLE_DEVICES with MIG entries no MIG instance answers to
  ("MIG-zzz,MIG-not-a-uuid,0", and 20,000 of them before "0,1"): the first
  ends the list, as for CUDA, so no device is counted.

Prints "ok NAME" / "FAIL NAME: why" and "N passed, M failed".
DMACONN_TEST_WRAPPER is put in front of the CLI (valgrind runs).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from harness import Report, cli_command, clean_env, run

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
KFD_TREE = os.path.join(HERE, "sysfs-kfd", "mi100-4")
NODES = "sys/class/kfd/kfd/topology/nodes"
TIMEOUT = float(os.environ.get("DMACONN_TEST_TIMEOUT", "120"))
SECRET = "root:$6$DMACONN-PRIVATE-LINE$do-not-print-me:19000:0:99999:7:::"


class Suite(Report):
    def __init__(self, build):
        super().__init__()
        self.cmd = cli_command(build)
        self.tmp = tempfile.mkdtemp(prefix="dmaconn-hostile-")

    def run(self, args, env_extra, timeout=TIMEOUT):
        env = clean_env({"DMACONN_ROCM_SMI_LIBRARY": "/nonexistent/librocm_smi64.so.1"})
        env.update(env_extra)
        return run(self.cmd + args, env, timeout=timeout, cwd=REPO)

    def tree(self, name):
        root = os.path.join(self.tmp, name)
        shutil.copytree(KFD_TREE, root, symlinks=True)
        return root

    # ------------------------------------------------------------------

    def product_name(self):
        root = self.tree("product-name")
        drm = os.path.join(root, "sys/class/drm/renderD128/device")
        os.makedirs(drm)
        with open(os.path.join(drm, "product_name"), "wb") as f:
            f.write(b"\xff\xfe Instinct \x1b[31mMI100\x1b[0m \x1b]0;owned\x07 \xc2\x9b2J\xe2\x82\n")
        problems = []
        rc, out, err = self.run(["-d", "rocm", "-c", "infinity_fabric", "--json"],
                                {"DMACONN_SYSFS_ROOT": root})
        if rc != 0:
            return self.problems("product_name", ["--json: exit %d: %r" % (rc, err[-2000:])])
        try:
            obj = json.loads(out.decode("utf-8", "strict"))
        except (UnicodeDecodeError, ValueError) as e:
            return self.problems("product_name", ["--json is not strict UTF-8 JSON: %s: %r" % (e, out[:400])])

        def strings(v):
            if isinstance(v, str):
                yield v
            elif isinstance(v, dict):
                for k, x in v.items():
                    yield k
                    yield from strings(x)
            elif isinstance(v, list):
                for x in v:
                    yield from strings(x)
        for s in strings(obj):
            bad = [c for c in s if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f]
            if bad:
                problems.append("a control character in %r" % s)
        names = [d.get("marketing_name") for r in obj.get("results", []) for d in r.get("devices", [])]
        want = "\ufffd\ufffd Instinct \ufffd[31mMI100\ufffd[0m \ufffd]0;owned\ufffd \ufffd2J\ufffd\ufffd"
        if want not in names:
            problems.append("marketing_name %r, expected %r among them" % (names, want))
        rc, out, err = self.run(["-d", "rocm", "-c", "infinity_fabric"], {"DMACONN_SYSFS_ROOT": root})
        if rc != 0 or b"\x1b" in out or b"\x1b" in err:
            problems.append("text output: exit %d, ESC in stdout %s, in stderr %s" % (
                rc, b"\x1b" in out, b"\x1b" in err))
        self.problems("product_name", problems)

    def fifo(self):
        root = self.tree("fifo")
        props = os.path.join(root, NODES, "2", "properties")
        os.unlink(props)
        os.mkfifo(props)
        try:
            rc, out, err = self.run(["-d", "rocm", "-c", "infinity_fabric", "--json"],
                                    {"DMACONN_SYSFS_ROOT": root}, timeout=60)
        except subprocess.TimeoutExpired:
            return self.problems("fifo", ["detection hung on a FIFO (60 s)"])
        problems = []
        if rc != 0:
            problems.append("exit %d: %r" % (rc, err[-2000:]))
        elif NODES.encode() + b"/2/properties" not in err:
            problems.append("no warning names the FIFO: %r" % err[-2000:])
        self.problems("fifo", problems)

    def fifo_nvidia(self):
        # The NVIDIA count without NVML reads vendor and class files too.
        root = os.path.join(self.tmp, "fifo-nvidia")
        shutil.copytree(os.path.join(HERE, "sysfs", "two-nvidia"), root, symlinks=True)
        vendor = os.path.join(root, "sys/bus/pci/devices/0000:65:00.0/vendor")
        os.unlink(vendor)
        os.mkfifo(vendor)
        try:
            rc, out, err = self.run(["-d", "cuda", "-c", "nvlink", "--json"],
                                    {"DMACONN_SYSFS_ROOT": root,
                                     "DMACONN_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"}, timeout=60)
        except subprocess.TimeoutExpired:
            return self.problems("fifo_nvidia", ["detection hung on a FIFO (60 s)"])
        problems = []
        if rc != 0:
            problems.append("exit %d: %r" % (rc, err[-2000:]))
        elif len(json.loads(out)["results"][0]["matrix"]) != 1:
            problems.append("expected the one readable NVIDIA GPU: %r" % out[:400])
        self.problems("fifo_nvidia", problems)

    def symlink(self):
        root = self.tree("symlink")
        private = os.path.join(self.tmp, "private")
        with open(private, "w") as f:
            f.write(SECRET + "\n")
        os.chmod(private, 0o600)
        props = os.path.join(root, NODES, "2", "properties")
        os.unlink(props)
        os.symlink(private, props)
        problems = []
        for conn in ("infinity_fabric", "p2p"):
            rc, out, err = self.run(["-d", "rocm", "-c", conn, "--json"], {"DMACONN_SYSFS_ROOT": root})
            for part in (b"root:", b"DMACONN-PRIVATE", b"do-not-print"):
                if part in out or part in err:
                    problems.append("%s: the private file's line is printed: %r" % (conn, (out + err)[-600:]))
                    break
            if rc != 0:
                problems.append("%s: exit %d: %r" % (conn, rc, err[-2000:]))
        self.problems("symlink", problems)

    def mig_entries(self):
        problems = []
        # 20,000 entries exceed what one variable may hold (128 KB): the
        # replay file pins them, as a recording pins its environment.
        with open(os.path.join(REPO, "examples", "hgx-h100.json")) as f:
            topo = json.load(f)
        topo["environment"] = {"CUDA_VISIBLE_DEVICES": ",".join(
            "MIG-%08x-0000-5000-8000-%012x" % (k, k) for k in range(20000)) + ",0,1"}
        pinned = os.path.join(self.tmp, "mig-20000.json")
        with open(pinned, "w") as f:
            json.dump(topo, f)
        for name, replay, cvd in (("unknown", "examples/hgx-h100.json", "MIG-zzz,MIG-not-a-uuid,0"),
                                  ("20000", pinned, "0")):
            try:
                rc, out, err = self.run(["--replay", replay, "-d", "cuda", "-c", "nvlink", "--json"],
                                        {"CUDA_VISIBLE_DEVICES": cvd}, timeout=60)
            except subprocess.TimeoutExpired:
                problems.append("%s: no answer within 60 s" % name)
                continue
            if rc != 0:
                problems.append("%s: exit %d: %r" % (name, rc, err[-600:]))
                continue
            matrix = json.loads(out)["results"][0]["matrix"]
            if matrix != []:
                problems.append("%s: %d devices, expected none (%d bytes of JSON)" % (name, len(matrix), len(out)))
        self.problems("mig_entries", problems)

    def many_pairs(self):
        sys.path.insert(0, os.path.join(REPO, "bench"))
        import gen_topologies
        n = 64 * max(1, int(os.environ.get("DMACONN_TEST_SIZE", "1") or 1))
        path = os.path.join(self.tmp, "nvswitch-%d-no-p2p.json" % n)
        with open(path, "w") as f:
            json.dump(gen_topologies.topology(n), f)
        rc, out, err = self.run(["--replay", path, "-d", "cuda", "-c", "p2p", "--json"], {})
        problems = []
        if rc != 0:
            return self.problems("many_pairs", ["exit %d: %r" % (rc, err[-2000:])])
        printed = [l for l in err.decode().splitlines() if l.startswith("dmaconn: warning: ")]
        warnings = json.loads(out)["results"][0]["warnings"]
        if len(printed) != 1 or len(warnings) != 1:
            problems.append("%d warnings printed, %d in the JSON; expected 1 and 1" % (len(printed), len(warnings)))
        tail = "(and %d more like it)" % (n * (n - 1) - 1)
        if not warnings or not warnings[0].endswith(tail) or not printed or not printed[0].endswith(tail):
            problems.append("the warning does not end with %r: %r" % (tail, (printed[:1], warnings[:1])))
        self.problems("many_pairs", problems)

    # C0 controls but LF, DEL, C1 (as UTF-8), U+2028 and U+2029.
    CONTROL = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]")
    OUTPUTS = (["-d", "cuda", "-c", "nvlink"], ["--topo"], ["--explain"], ["--format", "slurm"],
               ["--format", "dot"], ["--format", "nfd"], ["--format", "prometheus"], ["--format", "nccl-xml"])

    def shown(self, what, out, err):
        problems = []
        for stream, text in (("stdout", out), ("stderr", err)):
            try:
                text.decode("utf-8", "strict")
            except UnicodeDecodeError as e:
                problems.append("%s %s is not UTF-8: %s" % (what, stream, e))
            m = self.CONTROL.search(re.sub(rb"\n\t+", b"\n", text))  # DOT indents with tabs
            if m:
                problems.append("%s %s holds %r: %r" % (what, stream, m.group(0),
                                                        text[max(0, m.start() - 40):m.end() + 40]))
        return problems

    def replay_path(self):
        d = os.path.join(self.tmp.encode(), b"node\x1b[2J\x1b]0;t\x07\r\nName=gpu File=/dev/nvidia7\t\xc2\x9b1m"
                         b"\xe2\x80\xa8\xe2\x80\xa9\xff")
        os.makedirs(d)
        path = os.path.join(d, b"x\x1b[31m.json")
        shutil.copyfile(os.path.join(HERE, "topologies", "h200x2.json"), path)
        problems = []
        env = dict((k, v) for k, v in os.environ.items() if not k.startswith("DMACONN_"))
        env.update(DMACONN_QUIET="1", DMACONN_SYSFS_ROOT="/nonexistent")
        for args in self.OUTPUTS:
            p = subprocess.run(self.cmd + ["--replay", path] + args, env=env, capture_output=True, timeout=TIMEOUT)
            what = " ".join(args)
            if p.returncode != 0:
                problems.append("%s: exit %d: %r" % (what, p.returncode, p.stderr[-400:]))
            problems += self.shown(what, p.stdout, p.stderr)
            if "slurm" in args and len([l for l in p.stdout.split(b"\n") if l and not l.startswith(b"#")]) != 2:
                problems.append("slurm: not 2 GPU lines: %r" % p.stdout)
        # --record says where it wrote, the name shown as the replay's is.
        p = subprocess.run(self.cmd + ["--replay", path, "--record", os.path.join(d, b"rec\x1b[1m.json")], env=env,
                           capture_output=True, timeout=TIMEOUT)
        if p.returncode != 0 or b"recorded the replayed node" not in p.stderr:
            problems.append("--record: exit %d: %r" % (p.returncode, p.stderr[-400:]))
        problems += self.shown("--record", p.stdout, p.stderr)
        self.problems("replay_path", problems)

    def name_separators(self):
        with open(os.path.join(HERE, "topologies", "h200x2.json")) as f:
            topo = json.load(f)
        for i, d in enumerate(topo["nvml"]["devices"]):
            d["name"] = "NVIDIA\u2028H200\u2029%d" % i
        path = os.path.join(self.tmp, "separators.json")
        with open(path, "w") as f:
            json.dump(topo, f)
        problems = []
        for args in self.OUTPUTS + (["--json"],):
            rc, out, err = self.run(["--replay", path] + args, {"DMACONN_SYSFS_ROOT": "/nonexistent"})
            what = " ".join(args)
            if rc != 0:
                problems.append("%s: exit %d: %r" % (what, rc, err[-400:]))
            problems += self.shown(what, out, err)
        rc, out, err = self.run(["--replay", path, "--json"], {"DMACONN_SYSFS_ROOT": "/nonexistent"})
        names = [d.get("name") for r in json.loads(out)["results"] for d in r["devices"]][:2]
        if names != ["NVIDIA H200 0", "NVIDIA H200 1"]:
            problems.append("--json names %r, expected the separators as spaces" % names)
        self.problems("name_separators", problems)

    def refused_bus_id(self):
        with open(os.path.join(HERE, "topologies", "h200x2.json")) as f:
            topo = json.load(f)
        topo["nvml"]["devices"][0]["pci"]["bus_id"] = "\x1b[2J\r\nforged\t\u009b1m\u2028"
        path = os.path.join(self.tmp, "bad-bus-id.json")
        with open(path, "w") as f:
            json.dump(topo, f)
        rc, out, err = self.run(["--replay", path, "-d", "cuda", "-c", "nvlink"], {})
        problems = [] if rc == 1 else ["exit %d, expected 1 (the replay is refused)" % rc]
        problems += self.shown("refused replay", out, err)
        if err.count(b"\n") != 1:
            problems.append("the message is not one line: %r" % err)
        self.problems("refused_bus_id", problems)

    def empty_lists(self):
        with open(os.path.join(HERE, "topologies", "h200x2.json")) as f:
            topo = json.load(f)
        for d in topo["nvml"]["devices"]:
            d.update({"p2p": [], "nvlink": [], "mig_devices": []})
        path = os.path.join(self.tmp, "empty-lists.json")
        with open(path, "w") as f:
            json.dump(topo, f)
        problems = []
        for conn in ("p2p", "nvlink"):
            rc, out, err = self.run(["--replay", path, "-d", "cuda", "-c", conn, "--json"], {})
            if rc != 0 or b"runtime error" in err:
                problems.append("%s: exit %d: %r" % (conn, rc, err[-2000:]))
            elif json.loads(out)["results"][0]["matrix"] != [[0, 0], [0, 0]]:
                problems.append("%s: expected no connectivity: %r" % (conn, out[:400]))
        self.problems("empty_lists", problems)


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    s = Suite(argv[1])
    try:
        s.product_name()
        s.fifo()
        s.fifo_nvidia()
        s.symlink()
        s.mig_entries()
        s.many_pairs()
        s.empty_lists()
        s.replay_path()
        s.name_separators()
        s.refused_bus_id()
    finally:
        shutil.rmtree(s.tmp, ignore_errors=True)
    return s.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
