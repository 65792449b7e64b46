#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`dmaconn --format dot` against expected files and Graphviz's `dot`.

usage: dot_test.py DMACONN [MPIEXEC]
       dot_test.py DMACONN --regen     (rewrites tests/dot/*.dot; see README)

Every example (examples/*.json, drawn as a bare run draws it) and the
replays and sysfs trees below are drawn; the DOT text must equal
tests/dot/NAME.dot byte for byte, and `dot -Tsvg` must accept it with
nothing on standard error.  With MPIEXEC, two-rank jobs (two HGX nodes,
two trays of an NVL72 rack) are drawn too (rank 0 writes the job's graph).  `dot` comes from Debian's
graphviz package (tools/setup-deps.sh); without it the text is still
compared, and the test fails under CI=1 and is skipped (77) otherwise.
--regen writes what the CLI prints now: read the diff before committing.
"""
import difflib
import json
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from harness import Report, clean_env, golden_cases

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
EXPECTED = os.path.join(HERE, "dot")


def cases(cli):
    """name: (arguments after --format dot, extra environment): tests/dot/cases and every example."""
    stand_in = os.path.join(os.path.dirname(cli), "tests", "libdmaconn_replay_faults.so")
    found = {}
    for c in golden_cases(os.path.join(EXPECTED, "cases"), {"STAND_IN": stand_in}).values():
        if c.status != 0:
            raise ValueError("tests/dot/cases: %s: a drawing exits 0" % c.name)
        found[c.name] = (c.args, c.env)
    for path in sorted(glob.glob(os.path.join(REPO, "examples", "*.json"))):
        stem = os.path.splitext(os.path.basename(path))[0]
        found["example-" + stem] = (["--replay", os.path.relpath(path, REPO)], {})
    return found


CASES = {}

report = Report()
check = report.check


def env(extra=None, cli=None):
    # no verdict of this machine in the drawings
    e = clean_env({"DMACONN_QUIET": "1", "DMACONN_NO_CACHE": "1"}, drop=("XDG_CACHE_HOME",))
    e.update(extra or {})
    return e


def render(name, text, dot):
    """dot -Tsvg accepts it silently, and writes well-formed XML."""
    if not dot:
        return
    p = subprocess.run([dot, "-Tsvg"], input=text.encode(), capture_output=True, timeout=120)
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 0 and p.stdout.lstrip().startswith((b"<?xml", b"<svg")) and not err,
          "%s: dot -Tsvg exits 0 with no warnings (%d: %s)" % (name, p.returncode, err.strip()[:300]))
    try:
        ET.fromstring(p.stdout)
        check(True, name + ": the SVG is well-formed XML")
    except ET.ParseError as e:
        check(False, "%s: the SVG is well-formed XML (%s)" % (name, e))


def compare(name, text, regen):
    path = os.path.join(EXPECTED, name + ".dot")
    if regen:
        with open(path, "w") as f:
            f.write(text)
        print("wrote " + os.path.relpath(path, REPO))
        return
    try:
        with open(path) as f:
            want = f.read()
    except OSError:
        check(False, "%s: no expected file %s (tests/dot_test.py DMACONN --regen writes it)" %
              (name, os.path.relpath(path, REPO)))
        return
    if not check(text == want, "%s: the DOT text equals %s" % (name, os.path.relpath(path, REPO))):
        sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), text.splitlines(True),
                                                   "expected", "got"))


def check_mpi(cli, mpiexec, dot, regen, name, replays):
    rank_sh = os.path.join(HERE, "mpi", "rank.sh")
    e = env({"DMACONN_TEST_REPLAY_0": os.path.join(HERE, "mpi", "topologies", replays[0]),
             "DMACONN_TEST_REPLAY_1": os.path.join(HERE, "mpi", "topologies", replays[1]),
             "OMPI_MCA_btl": "self,vader", "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
             "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_hwloc_base_binding_policy": "none",
             "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
             "ASAN_OPTIONS": "detect_leaks=0"})
    p = subprocess.run([mpiexec, "-np", "2", "sh", rank_sh, cli, "--mpi", "-d", "cuda", "-c", "nvlink",
                        "--format", "dot"], capture_output=True, text=True, env=e, cwd=REPO, timeout=120)
    check(p.returncode == 0, "%s: --mpi --format dot exits 0 (%d: %s)" % (name, p.returncode, p.stderr[-300:]))
    check(p.stdout.count("graph dmaconn {") == 1, name + ": one graph, from rank 0")
    compare(name, p.stdout, regen)
    render(name, p.stdout, dot)


def pcie_replay(path, n):
    """n GPUs that reach each other through the host bridge only (SYS)."""
    sys.path.insert(0, os.path.join(REPO, "bench"))
    import gen_topologies
    t = gen_topologies.topology(n, p2p=True, rows=True)
    for dev in t["nvml"]["devices"]:
        dev["nvlink"] = []
    with open(path, "w") as f:
        json.dump(t, f)


def check_large(cli, dot):
    """Partitions of a card drawn as the card; a summary above 256 edges between devices."""
    args, extra = CASES["mi300x-cpx"]
    out = subprocess.run([cli, "--format", "dot"] + args, capture_output=True, text=True, env=env(extra, cli),
                         cwd=REPO).stdout
    nodes = re.findall(r"^\t(d\d+) \[label=\"GPUs (\S+) \(8 partitions of one card\)", out, re.M)
    edges = re.findall(r"^\td\d+ -- d\d+ \[label=\"64 partition pairs\\nXGMI", out, re.M)
    check(len(nodes) == 8 and [g for _, g in nodes] == ["%d-%d" % (8 * k, 8 * k + 7) for k in range(8)] and
          len(edges) == 28 and out.count(" -- ") == 28 and out.count("partitions (28 pairs): XGMI") == 8,
          "mi300x-cpx: 8 card nodes of 8 partitions, 28 edges of 64 partition pairs each (%d nodes, %d edges)"
          % (len(nodes), out.count(" -- ")))
    with tempfile.TemporaryDirectory() as tmp:
        for n, edges in ((6, 15), (8, 28), (16, 120), (23, 253), (24, 276)):
            replay = os.path.join(tmp, "pcie-%d.json" % n)
            pcie_replay(replay, n)
            p = subprocess.run([cli, "--format", "dot", "--replay", replay], capture_output=True, text=True,
                               env=env(), cwd=REPO, timeout=60)
            drawn = p.stdout.count(" -- ")
            if n < 24:
                check(p.returncode == 0 and drawn == edges and "summary" not in p.stdout,
                      "%d PCIe GPUs: %d edges, drawn (%d)" % (n, edges, drawn))
                # Labels on edges that rank nothing (side by side) make dot
                # warn "Unable to reclaim box space in spline routing".
                render("pcie-%d" % n, p.stdout, dot)
                continue
            check(p.returncode == 0 and drawn == 0 and
                  "24 devices, 276 edges between them: more than 256, not drawn" in p.stdout and
                  "\\n276 x SYS\"" in p.stdout,
                  "%d PCIe GPUs: %d edges, more than 256: a summary instead%s" % (
                      n, edges, "" if "summary" in p.stdout else " (%r)" % p.stdout[-300:]))
            render("pcie-%d summary" % n, p.stdout, dot)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cli = os.path.abspath(sys.argv[1])
    regen = "--regen" in sys.argv[2:]
    mpiexec = next((a for a in sys.argv[2:] if a != "--regen"), None)
    dot = shutil.which("dot")
    CASES.update(cases(cli))
    for name, (args, extra) in sorted(CASES.items()):
        p = subprocess.run([cli, "--format", "dot"] + args, capture_output=True, text=True, env=env(extra, cli),
                           cwd=REPO, timeout=60)
        if not check(p.returncode == 0, "%s: exits 0 (%d: %s)" % (name, p.returncode, p.stderr.strip()[:300])):
            continue
        check(p.stdout.startswith("graph dmaconn {\n") and p.stdout.endswith("}\n"), name + ": one graph")
        compare(name, p.stdout, regen)
        render(name, p.stdout, dot)
    if mpiexec:
        # Two HGX nodes (a node-local fabric each), two trays of one rack.
        check_mpi(cli, mpiexec, dot, regen, "mpi-hgx-2-nodes", ("hgx-1.json", "hgx-2.json"))
        check_mpi(cli, mpiexec, dot, regen, "mpi-nvl72-2-trays", ("tray-a.json", "tray-b.json"))
    # What the colours must say, whatever the expected files hold: a DGX-1's
    # one-link pairs and a PCIe card's unbridged links are by design; GPU 3
    # of the degraded HGX lost links 5 and 11; the recording's failed verdict.
    warn = {}
    for name in ("example-dgx1-v100", "mixed-three", "hgx-h100-8-degraded", "verified-fail-hang"):
        args, extra = CASES[name]
        out = subprocess.run([cli, "--format", "dot"] + args, capture_output=True, text=True,
                             env=env(extra, cli), cwd=REPO).stdout
        warn[name] = [l.split(" [")[0].strip() for l in out.splitlines() if "#c62828" in l and "label=" in l
                      and not l.lstrip().startswith("graph")]
    check(warn["example-dgx1-v100"] == [] and warn["mixed-three"] == [], "nothing red by design (%s)" % warn)
    check(warn["hgx-h100-8-degraded"] == ["d3", "d3 -- s0"], "degraded HGX: GPU 3 and its switch links red")
    check(warn["verified-fail-hang"] == ["d0 -- d1"], "the failed verdict red")
    check_large(cli, dot)
    # The SVG shows the names as the replay spells them, not as entities read.
    if dot:
        args, extra = CASES["hostile-entities"]
        text = subprocess.run([cli, "--format", "dot"] + args, capture_output=True, text=True, env=env(extra, cli),
                              cwd=REPO).stdout
        svg = subprocess.run([dot, "-Tsvg"], input=text.encode(), capture_output=True).stdout
        try:
            texts = [e.text for e in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")]
        except ET.ParseError:
            texts = []
        want = ["NVIDIA H200 &#1; &#x1F; & &amp; AT&T",
                "NVIDIA H200 &#xD800; &lt;b&gt; <i>x</i> \ufffd\ufffd &#65535;"]
        check(all(w in texts for w in want), "hostile-entities: the SVG shows the names as written (%s)" % texts[2:])
    # The replay's file name is in the graph's label: entities there too.
    with tempfile.TemporaryDirectory() as tmp:
        replay = os.path.join(tmp, "node &#1; &#xD800; &amp; \ufffe.json")
        shutil.copyfile(os.path.join(EXPECTED, "hostile-names.json"), replay)
        p = subprocess.run([cli, "--format", "dot", "--replay", replay], capture_output=True, text=True, env=env(),
                           cwd=REPO, timeout=60)
        check(p.returncode == 0 and "node &amp;#1; &amp;#xD800; &amp;amp; \ufffd.json" in p.stdout,
              "a replay named with entities: the label escapes them" +
              ("" if p.returncode == 0 else " (%d: %s)" % (p.returncode, p.stderr[-200:])))
        render("replay named with entities", p.stdout, dot)
    # Deterministic: a second run writes the same bytes.
    args, extra = CASES["hgx-h100-8-degraded"]
    runs = [subprocess.run([cli, "--format", "dot"] + args, capture_output=True, text=True, env=env(extra),
                           cwd=REPO).stdout for _ in range(2)]
    check(runs[0] == runs[1], "two runs write the same bytes")
    if report.done():
        sys.exit(1)
    if not dot and not regen:
        print("dot (Debian's graphviz) not found: the text was compared, not rendered")
        sys.exit(1 if os.environ.get("CI") else 77)


if __name__ == "__main__":
    main()
