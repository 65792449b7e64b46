#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Multi-node tests: simulated nodes, one replay file per rank, one machine.

usage: run_mpi.py --mpiexec MPIEXEC --test TEST_MPI --cli DMACONN [FILTER]

Every scenario of scenarios.json runs under `MPIEXEC -np K` with each rank
started through rank.sh, which gives rank R the replay file and
CUDA_VISIBLE_DEVICES the scenario names for it (DMACONN_TEST_REPLAY_<R>,
DMACONN_TEST_CVD_<R>).  A scenario either runs test_mpi, where every rank
checks the global result against the expectations written for it and the
exit status of mpiexec collects theirs, or (with "cli") runs
`dmaconn --mpi ...`, whose output, printed once by rank 0, is checked here.

A scenario: "name"; "ranks": a list of {"replay": FILE (relative to
topologies/, or absolute), "cvd": CUDA_VISIBLE_DEVICES}; "connection"
("nvlink"); "n"; "matrix": a list of rows, or {"groups": [G per device],
"value": V}: V between distinct devices of the same non-null group, 0
elsewhere; "warning_count"; "warnings_contain"; "devices": {"I": {KEY:
VALUE or null for absent}}; "cli": extra CLI arguments (the CLI is then run
instead of test_mpi); "text_contains" (CLI text output, each exactly once);
"results_min" (CLI JSON without -d/-c: at least that many results, the
cuda/CONNECTION one checked).

Open MPI runs as root here with OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM), shared
memory only (btl self,vader), oversubscribed.  Each scenario has 120 s; a
deadlock shows as a timeout.  FILTER selects scenarios by substring.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from harness import Report  # noqa: E402

TOPO = os.path.join(HERE, "topologies")
TIMEOUT = 120


def expected_matrix(sc):
    m, n = sc["matrix"], sc["n"]
    if isinstance(m, list):
        return m
    g, v = m["groups"], m["value"]
    return [[v if i != j and g[i] is not None and g[i] == g[j] else 0 for j in range(n)] for i in range(n)]


def expectation_text(sc):
    lines = ["connection " + sc.get("connection", "nvlink"), "size %d" % sc["n"]]
    for row in expected_matrix(sc):
        lines.append("row " + " ".join(str(x) for x in row))
    if "warning_count" in sc:
        lines.append("warnings %d" % sc["warning_count"])
    for w in sc.get("warnings_contain", []):
        lines.append("contains " + w)
    for i, props in sorted(sc.get("devices", {}).items(), key=lambda kv: int(kv[0])):
        for key, value in props.items():
            lines.append("noprop %s %s" % (i, key) if value is None else "prop %s %s %s" % (i, key, value))
    return "\n".join(lines) + "\n"


def is_open_mpi(mpiexec):
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Open MPI" in out or "OpenRTE" in out


def environment(sc, open_mpi):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DMACONN_", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "OMPI_COMM_"))}
    env["DMACONN_QUIET"] = "1" if "cli" not in sc else ""
    for r, rank in enumerate(sc["ranks"]):
        replay = rank.get("replay")
        if replay:
            env["DMACONN_TEST_REPLAY_%d" % r] = os.path.join(TOPO, replay)  # as given when absolute
        if "cvd" in rank:
            env["DMACONN_TEST_CVD_%d" % r] = rank["cvd"]
    if open_mpi:
        env.update({
            "OMPI_ALLOW_RUN_AS_ROOT": "1",
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMPI_MCA_btl": "self,vader",
            "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
            "OMPI_MCA_rmaps_base_oversubscribe": "1",
            "OMPI_MCA_hwloc_base_binding_policy": "none",
        })
    return env


def launch(args, sc, program, open_mpi):
    cmd = [args.mpiexec]
    if open_mpi:
        cmd.append("--oversubscribe")
    cmd += ["-np", str(len(sc["ranks"])), "sh", os.path.join(HERE, "rank.sh")] + program
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=environment(sc, open_mpi), start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out, err + "\n(timed out after %d s: a deadlock?)" % TIMEOUT
    return proc.returncode, out, err


def run_test_mpi(args, sc, text, tmp, open_mpi):
    """test_mpi on sc's ranks, each checking the expectation text (written
    to tmp); (exit status, stdout, stderr) as launch() gives them."""
    path = os.path.join(tmp, sc["name"] + ".expect")
    with open(path, "w") as f:
        f.write(text)
    return launch(args, sc, [args.test, path], open_mpi)


def parser(test=True):
    """The command line of the launcher tests: --mpiexec, --cli, --test
    (test_mpi) where test, and FILTER."""
    p = argparse.ArgumentParser()
    p.add_argument("--mpiexec", required=True)
    if test:
        p.add_argument("--test", required=True)
    p.add_argument("--cli", required=True)
    p.add_argument("filter", nargs="?", default="", help="only the scenarios whose name holds it")
    return p


def check_cli(sc, status, out, err):
    """Problems with `dmaconn --mpi` output (printed once, by rank 0)."""
    problems = []
    if status != 0:
        problems.append("exit status %s" % status)
    args = sc["cli"]
    if "--json" in args:
        lines = [l for l in out.splitlines() if l.strip()]
        if len(lines) != 1:
            return problems + ["%d lines of JSON output, expected 1" % len(lines)]
        try:
            doc = json.loads(lines[0])
        except ValueError as e:
            return problems + ["output is not JSON: %s" % e]
        if doc.get("version") != 1:
            problems.append("document version %r, expected 1" % doc.get("version"))
        results = doc.get("results", [])
        if len(results) < sc.get("results_min", 1):
            problems.append("%d results, expected at least %d" % (len(results), sc["results_min"]))
        wanted = [x for x in results
                  if x["device_type"] == "cuda" and x["connection_type"] == sc.get("connection", "nvlink")]
        if len(wanted) != 1:
            return problems + ["%d cuda/%s results" % (len(wanted), sc.get("connection", "nvlink"))]
        r = wanted[0]
        if r["matrix"] != expected_matrix(sc):
            problems.append("matrix %s, expected %s" % (r["matrix"], expected_matrix(sc)))
        if "warning_count" in sc and len(r["warnings"]) != sc["warning_count"]:
            problems.append("%d warnings: %s" % (len(r["warnings"]), r["warnings"]))
        for i, props in sc.get("devices", {}).items():
            dev = r["devices"][int(i)]
            for k, v in props.items():
                if dev.get(k) != v:
                    problems.append("device %s: %s = %r, expected %r" % (i, k, dev.get(k), v))
        warnings = r["warnings"]
    else:
        rows = [json.loads(l) for l in out.splitlines() if l.startswith("[")]
        if rows != expected_matrix(sc):
            problems.append("matrix %s, expected %s" % (rows, expected_matrix(sc)))
        for text in sc.get("text_contains", []):
            if out.count(text) != 1:
                problems.append("%r appears %d times in the output, expected once" % (text, out.count(text)))
        warnings = []
    # Rank 0 prints every rank's warnings once (none with --quiet).
    printed = [l for l in err.splitlines() if l.startswith("dmaconn: warning: ")]
    for w in sc.get("warnings_contain", []):
        hits = [l for l in printed if w in l]
        if "--quiet" in args and hits:
            problems.append("--quiet printed %r" % hits[0])
        elif "--quiet" not in args and len(hits) != 1:
            problems.append("warning %r printed %d times on stderr" % (w, len(hits)))
        if warnings and not any(w in x for x in warnings):
            problems.append("no warning in the JSON contains %r" % w)
    return problems


def main():
    args = parser().parse_args()
    with open(os.path.join(HERE, "scenarios.json")) as f:
        scenarios = json.load(f)
    open_mpi = is_open_mpi(args.mpiexec)
    report = Report()
    with tempfile.TemporaryDirectory() as tmp:
        for sc in scenarios:
            if args.filter not in sc["name"]:
                continue
            if "cli" in sc:
                status, out, err = launch(args, sc, [args.cli, "--mpi"] + sc["cli"], open_mpi)
            else:
                status, out, err = run_test_mpi(args, sc, expectation_text(sc), tmp, open_mpi)
            if "cli" in sc:
                problems = check_cli(sc, status, out, err)
            else:
                problems = [] if status == 0 else ["exit status %s" % status]
            if problems:
                problems += ["stdout:"] + ["  " + l for l in out.splitlines()]
                problems += ["stderr:"] + ["  " + l for l in err.splitlines()]
            report.problems("%s (%d ranks)" % (sc["name"], len(sc["ranks"])), problems)
    report.check(report.passed + report.failed > 0, "at least one scenario ran")
    return report.done()


if __name__ == "__main__":
    sys.exit(main())
