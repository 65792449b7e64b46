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

from harness import Report, clean_env

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
EXPECTED = os.path.join(HERE, "dot")

T, R, X = "tests/topologies/", "tests/topologies-rocm/", "tests/topologies-xpu/"
STAND_IN = "STAND_IN"  # BUILD/tests/libdmaconn_replay_faults.so, beside the CLI
# name: (arguments after --format dot, extra environment)
CASES = {
    # NVIDIA: switches, cube-mesh, bridges, PCIe classes, what went wrong.
    "hgx-h100-8-degraded": (["--replay", T + "hgx-h100-8-degraded.json", "-d", "cuda", "-c", "nvlink"], {}),
    "hgx-h100-8": (["--replay", T + "hgx-h100-8.json"], {}),
    "hgx-h100-8-nvlink-down": (["--replay", T + "hgx-h100-8-nvlink-down.json"], {}),
    "dgx1-v100-p2p": (["--replay", T + "dgx1-v100.json", "-d", "cuda", "-c", "p2p"], {}),
    "dgx-a100-8": (["--replay", T + "dgx-a100-8.json"], {}),
    "nvswitch-plus-direct": (["--replay", T + "nvswitch-plus-direct.json"], {}),
    "fabric-failed": (["--replay", T + "fabric-failed.json"], {}),
    "fabric-in-progress": (["--replay", T + "fabric-in-progress.json"], {}),
    "fabric-two-cliques": (["--replay", T + "fabric-two-cliques.json"], {}),
    "bridge-a6000-4": (["--replay", T + "bridge-a6000-4.json"], {}),
    "mixed-three": (["--replay", T + "mixed-three.json"], {}),
    "p2p-one-sided-nvlink": (["--replay", T + "p2p-one-sided-nvlink.json"], {}),
    "pcie-l40s-4": (["--replay", T + "pcie-l40s-4.json"], {}),
    "pcie-l40s-4-p2p": (["--replay", T + "pcie-l40s-4.json", "-d", "cuda", "-c", "p2p"], {}),
    "power9-ac922": (["--replay", T + "power9-ac922.json"], {}),
    "mig": (["--replay", T + "mig.json"], {}),
    "no-gpus": (["--replay", T + "no-gpus.json", "-d", "cuda", "-c", "nvlink"], {}),
    "no-gpus-bare": (["--replay", T + "no-gpus.json"], {}),
    # Names with quotes, a backslash, a newline, a tab and non-ASCII text.
    "hostile-names": (["--replay", "tests/dot/hostile-names.json"], {}),
    # Names Graphviz would read as entities (&#1;, &#xD800;), SVG's noncharacters.
    "hostile-entities": (["--replay", "tests/dot/hostile-entities.json"], {}),
    # Verdicts of a recording: a pair that failed, one that hung.
    "verified-fail-hang": (["--replay", "tests/topologies-reasons/verified-fail-hang.json", "-d", "cuda",
                            "-c", "nvlink"], {}),
    "verified-fail-hang-verified": (["--replay", "tests/topologies-reasons/verified-fail-hang.json", "-d",
                                     "cuda", "-c", "verified"], {}),
    # AMD: XGMI meshes, a PCIe-only box, links the kernel reports disabled.
    "mi300x-8": (["--replay", R + "mi300x-8.json"], {}),
    "mi250x-8": (["--replay", R + "mi250x-8.json"], {}),
    "mi250x-8-p2p": (["--replay", R + "mi250x-8.json", "-d", "rocm", "-c", "p2p"], {}),
    "mi100-4": (["--replay", R + "mi100-4.json"], {}),
    # 8 MI300X in CPX mode: 64 partitions, drawn as 8 cards.
    "mi300x-cpx": (["--replay", R + "mi300x-cpx.json"], {}),
    "radeon-pcie-4": (["--replay", R + "radeon-pcie-4.json"], {}),
    "rocm-disabled-link": (["-d", "rocm", "-c", "infinity_fabric"],
                           {"DMACONN_SYSFS_ROOT": os.path.join(HERE, "sysfs-kfd", "disabled-link")}),
    # Intel: Xe Link between cards, PCIe only; under the test stand-in's
    # model of Intel's runtime (tiles as devices, FLAT), MDFI between tiles.
    "aurora-6x2": (["--replay", X + "aurora-6x2.json"], {}),
    "aurora-6x2-tiles": (["--replay", X + "aurora-6x2.json"], {"DMACONN_REPLAY_LIBRARY": STAND_IN}),
    "aurora-6x2-tiles-p2p": (["--replay", X + "aurora-6x2.json", "-d", "xpu", "-c", "p2p"],
                             {"DMACONN_REPLAY_LIBRARY": STAND_IN}),
    "pvc-2x2": (["--replay", X + "pvc-2x2.json"], {}),
    "arc-pcie-4": (["--replay", X + "arc-pcie-4.json"], {}),
}
for path in sorted(glob.glob(os.path.join(REPO, "examples", "*.json"))):
    stem = os.path.splitext(os.path.basename(path))[0]
    CASES["example-" + stem] = (["--replay", os.path.relpath(path, REPO)], {})

report = Report()
check = report.check


def env(extra=None, cli=None):
    # no verdict of this machine in the drawings
    e = clean_env({"DMACONN_QUIET": "1", "DMACONN_NO_CACHE": "1"}, drop=("XDG_CACHE_HOME",))
    for k, v in (extra or {}).items():
        e[k] = os.path.join(os.path.dirname(cli), "tests", "libdmaconn_replay_faults.so") if v == STAND_IN else v
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
