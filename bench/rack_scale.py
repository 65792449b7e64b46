#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Time and peak memory of detection against the GPU count, 8 -> 4,096.

Three paths, each a fresh process per measurement, no GPU needed:

- C: build/bench/first_detect (the first detection, NVML load included) on
  the stand-in NVML of tests/fake_nvml_nvl.c (DMACONN_NVML_LIBRARY, an
  NVL-style rack of N GPUs computed on each call, no file to parse);
- Python: dmaconn.detect() on the same stand-in (the module and library
  already loaded: bench/import_time.py measures that);
- CLI replay: `dmaconn --replay F -d cuda -c CONN --json > /dev/null` of a
  version 2 file with every pair's P2P answers as rows
  (bench/gen_topologies.py --rows), its size on disk included.

Each for cuda/nvlink and cuda/p2p; time is wall time (median of --runs),
memory the peak RSS (VmHWM for first_detect; Python's own ru_maxrss; for the
CLI wait4's ru_maxrss, which Linux carries over from this script at the fork,
so an upper bound that includes this script's 13-60 MB).
Writes rack_scale.json (the data), rack_scale.png (the chart, matplotlib)
and RACK.md (the table) into --out.

    python3 bench/rack_scale.py [--build build] [--out bench] [--runs 3] [--max 4096]
    python3 bench/rack_scale.py --chart-only    (the chart again from --out's rack_scale.json)
    python3 bench/rack_scale.py --mpi-only      (the MPI path alone, into that data)

and, where mpiexec is found, the MPI path: 1, 2, 4 and 8 simulated ranks,
each a replayed 72-GPU tray of one NVLink domain (tests/mpi/rank.sh).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import gen_topologies  # noqa: E402

COUNTS = (8, 16, 32, 64, 72, 128, 256, 512, 576, 1024, 2048, 4096)
CONNECTIONS = ("nvlink", "p2p")
GOALS = {"c_ms": 100, "c_mb": 64, "python_ms": 300, "replay_s": 1.0, "replay_mb": 256, "file_mb": 10}

# The module and the library loaded first (what `import dmaconn` and its
# first use cost is bench/import_time.py's): the time is detect()'s.
PY_DETECT = """
import sys, time
import dmaconn
dmaconn.version()
t = time.perf_counter()
r = dmaconn.detect("cuda", sys.argv[1])
print((time.perf_counter() - t) * 1e3, len(r.matrix))
"""


def clean_env(extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DMACONN_")}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.pop("CUDA_DEVICE_ORDER", None)
    env["DMACONN_QUIET"] = "1"
    env.update(extra)
    return env


def waited(cmd, env, stdout=subprocess.DEVNULL):
    start = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), time.perf_counter() - start, usage.ru_maxrss / 1024


def median(xs):
    return round(statistics.median(xs), 3) if xs else None


def measure(build, n, conn, runs, tmp):
    fake = {"DMACONN_NVML_LIBRARY": os.path.join(build, "tests", "fakenvml", "libnvidia-ml.so.1"),
            "DMACONN_FAKE_NVML_GPUS": str(n)}
    row = {"n": n, "connection": conn}
    c_ms, c_mb = [], []
    for _ in range(runs):
        out = subprocess.run([os.path.join(build, "bench", "first_detect"), conn], env=clean_env(fake),
                             capture_output=True, text=True, check=True).stdout
        d = json.loads(out)
        c_ms.append(d["first_ms"])
        c_mb.append(d["hwm_kb"] / 1024)
    row["c_ms"], row["c_mb"] = median(c_ms), median(c_mb)
    py_ms, py_mb = [], []
    env = clean_env(dict(fake, PYTHONPATH=os.path.join(REPO, "python"),
                         DMACONN_LIBRARY=os.path.join(build, "libdmaconn.so.0")))
    for _ in range(runs):
        with tempfile.TemporaryFile() as out:
            rc, _, mb = waited([sys.executable, "-c", PY_DETECT, conn], env, stdout=out)
            out.seek(0)
            py_ms.append(float(out.read().split()[0]))
            py_mb.append(mb)
    row["python_ms"], row["python_mb"] = median(py_ms), median(py_mb)
    path = os.path.join(tmp, "rack-%d.json" % n)
    if not os.path.exists(path):
        with open(path, "w") as f:
            json.dump(gen_topologies.topology(n, p2p=True, rows=True), f)
    row["file_mb"] = round(os.path.getsize(path) / 2**20, 3)
    rs, rmb = [], []
    for _ in range(runs):
        rc, seconds, mb = waited([os.path.join(build, "dmaconn"), "--replay", path, "-d", "cuda", "-c", conn,
                                  "--json"], clean_env({}))
        if rc != 0:
            raise SystemExit("dmaconn --replay %s exited %d" % (path, rc))
        rs.append(seconds)
        rmb.append(mb)
    row["replay_s"], row["replay_mb"] = median(rs), median(rmb)
    return row


def measure_mpi(build, ranks, conn, runs, tmp):
    """`mpiexec -np RANKS dmaconn --mpi`: each rank a 72-GPU tray of one
    NVLink domain, replayed (its own host name and UUIDs), rank 0 printing
    the RANKS x 72 GPU result.  Time of the whole job, peak RSS of the
    largest process (the job's ru_maxrss of its children)."""
    env = {"DMACONN_MPI_LIBRARY": os.path.join(build, "libdmaconn_mpi.so.0")}
    for k in range(ranks):
        path = os.path.join(tmp, "tray-%d.json" % k)
        if not os.path.exists(path):
            t = gen_topologies.topology(72, p2p=True, rows=True)
            t["host"] = "tray-%d" % k
            for i, d in enumerate(t["nvml"]["devices"]):
                d["uuid"] = "GPU-%08x-0000-4000-8000-%012x" % (0xa0000000 + k, i)
                d["fabric"]["cluster_uuid"] = "11111111-2222-3333-4444-555555555555"
            with open(path, "w") as f:
                json.dump(t, f)
        env["DMACONN_TEST_REPLAY_%d" % k] = path
    cmd = ["mpiexec", "--oversubscribe", "-np", str(ranks), "sh", os.path.join(REPO, "tests", "mpi", "rank.sh"),
           os.path.join(build, "dmaconn"), "--mpi", "-d", "cuda", "-c", conn, "--json"]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    # A fresh interpreter waits for the job: its RUSAGE_CHILDREN peak is
    # that of the largest process of the job (mpiexec waits for the ranks).
    probe = ("import os, resource, subprocess, sys, time\n"
             "t = time.perf_counter()\n"
             "rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
             "print(rc, time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)\n")
    secs, mbs = [], []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", probe] + cmd, env=clean_env(env), capture_output=True,
                             text=True).stdout.split()
        if not out or out[0] != "0":
            raise SystemExit("mpiexec failed: %r" % out)
        secs.append(float(out[1]))
        mbs.append(float(out[2]))
    return {"ranks": ranks, "n": 72 * ranks, "connection": conn, "mpi_s": median(secs), "mpi_mb": median(mbs)}


def chart(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    series = [("c_ms", "c_mb", "C, first detection (stand-in NVML)"),
              ("python_ms", "python_mb", "Python detect() (stand-in NVML)"),
              ("replay_s", "replay_mb", "CLI --replay --json (v2 rows)")]
    for conn, style in zip(CONNECTIONS, ("-", "--")):
        sel = [r for r in rows if r["connection"] == conn]
        ns = [r["n"] for r in sel]
        for (tkey, mkey, label), color in zip(series, ("tab:blue", "tab:orange", "tab:green")):
            scale = 1000 if tkey == "replay_s" else 1
            axes[0].plot(ns, [r[tkey] * scale for r in sel], style, marker="o", ms=3, color=color,
                         label="%s, cuda/%s" % (label, conn))
            axes[1].plot(ns, [r[mkey] for r in sel], style, marker="o", ms=3, color=color,
                         label="%s, cuda/%s" % (label, conn))
    ns = sorted({r["n"] for r in rows})
    ticks = [n for n in ns if n & (n - 1) == 0 and n != 512] + ([576] if 576 in ns else [])
    # Cost per pair constant: time and memory as N*N (grey, through the largest point).
    top = max(ns)
    for ax, key in ((axes[0], "c_ms"), (axes[1], "c_mb")):
        last = [r[key] for r in rows if r["n"] == top and r["connection"] == "p2p"]
        if last:
            ref = [n for n in ns if n * 16 >= top]
            ax.plot(ref, [last[0] * (n / top) ** 2 for n in ref], color="grey", lw=0.8, ls="-.", label="N\u00b2")
    for ax, unit in ((axes[0], "time (ms)"), (axes[1], "peak RSS (MB)")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(sorted(ticks))
        ax.set_xticklabels([str(n) for n in sorted(ticks)], rotation=45)
        ax.set_xlabel("GPUs (N)")
        ax.set_ylabel(unit)
        ax.axvline(576, color="grey", lw=0.8, ls=":")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].axhline(GOALS["c_ms"], color="tab:blue", lw=0.8, ls=":")
    axes[0].axhline(GOALS["python_ms"], color="tab:orange", lw=0.8, ls=":")
    axes[0].axhline(GOALS["replay_s"] * 1000, color="tab:green", lw=0.8, ls=":")
    axes[1].axhline(GOALS["c_mb"], color="tab:blue", lw=0.8, ls=":")
    axes[1].axhline(GOALS["replay_mb"], color="tab:green", lw=0.8, ls=":")
    axes[0].set_title("time against GPU count (dotted: the 576-GPU goals)")
    axes[1].set_title("peak memory against GPU count")
    axes[1].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def table(rows):
    lines = ["| N | conn | C ms | C MB | Python ms | Python MB | replay file MB | replay s | replay MB |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append("| %d | %s | %s | %.1f | %s | %.1f | %.3f | %.3f | %.1f |" % (
            r["n"], r["connection"], r["c_ms"], r["c_mb"], r["python_ms"], r["python_mb"], r["file_mb"],
            r["replay_s"], r["replay_mb"]))
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max", type=int, default=4096)
    ap.add_argument("--chart-only", action="store_true")
    ap.add_argument("--mpi-only", action="store_true", help="measure the MPI path alone, into the existing data")
    args = ap.parse_args(argv[1:])
    out_json = os.path.join(args.out, "rack_scale.json")
    mpi_rows = []
    if args.chart_only or args.mpi_only:
        with open(out_json) as f:
            saved = json.load(f)
        rows, mpi_rows = saved["rows"], saved.get("mpi", [])
    if args.mpi_only or not args.chart_only:
        if not args.mpi_only:
            rows = []
        mpi_rows = []
        build = os.path.abspath(args.build)
        with tempfile.TemporaryDirectory(prefix="dmaconn-rack-") as tmp:
            for n in [n for n in COUNTS if n <= args.max and not args.mpi_only]:
                for conn in CONNECTIONS:
                    runs = args.runs if n <= 1024 else 1
                    rows.append(measure(build, n, conn, runs, tmp))
                    print(json.dumps(rows[-1]), flush=True)
            if shutil.which("mpiexec"):
                for ranks in (1, 2, 4, 8):
                    for conn in CONNECTIONS:
                        mpi_rows.append(measure_mpi(build, ranks, conn, args.runs, tmp))
                        print(json.dumps(mpi_rows[-1]), flush=True)
        with open(out_json, "w") as f:
            json.dump({"goals_at_576": GOALS, "machine": os.uname().nodename + ", %d CPUs" % os.cpu_count(),
                       "rows": rows, "mpi": mpi_rows}, f, indent=1)
            f.write("\n")
    chart(rows, os.path.join(args.out, "rack_scale.png"))
    with open(os.path.join(args.out, "RACK.md"), "w") as f:
        f.write("# Detection at rack scale\n\nMade by `python3 bench/rack_scale.py` (see its docstring); "
                "the chart is rack_scale.png, the data rack_scale.json.  C MB is the detecting process's "
                "VmHWM, Python MB the interpreter's peak, replay MB an upper bound (wait4's ru_maxrss, which "
                "includes the launching script's own peak at the fork).\n\n" + table(rows) + "\n")
        if mpi_rows:
            f.write("\nThe MPI path, simulated ranks on this one machine (`mpiexec -np R dmaconn --mpi -d cuda "
                    "-c CONN --json`, each rank a replayed 72-GPU tray of one NVLink domain): wall time of the "
                    "whole job, peak RSS of its largest process.\n\n| ranks | N | conn | job s | peak MB |\n"
                    "| ---: | ---: | --- | ---: | ---: |\n")
            for r in mpi_rows:
                f.write("| %d | %d | %s | %.3f | %.1f |\n" % (r["ranks"], r["n"], r["connection"], r["mpi_s"],
                                                           r["mpi_mb"]))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
