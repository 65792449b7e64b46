#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Size, time and peak memory of `--format prometheus` against the device count.

For each N, writes a synthetic replay of N NVSwitch-attached GPUs with the
P2P answers of every pair as version 2 rows (bench/gen_topologies.py) and
runs the CLI on it as node_exporter's textfile job would:

    dmaconn --replay nvswitch-N.json --format prometheus

measuring wall time (detection included), the child's CPU time (user +
system: what a loaded machine changes least), its peak resident memory
(wait4's ru_maxrss) and the document's size, read from the pipe with the
series of each pair metric counted (never stored: at 2,000 GPUs it is two
gigabytes).  Prints a table and writes
prometheus_scale.json into --out.  No GPU needed; no timing is asserted.

    python3 bench/prometheus_scale.py [--build build] [--out DIR] [--runs K] [N ...]   (default N: 576 2000)

With --runs K, each N runs K times: the median time and peak memory (the
bytes and series are the same every run).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_topologies  # noqa: E402

DEFAULT_COUNTS = (576, 2000)


NAMES = (b"dmaconn_pair_connectivity{", b"dmaconn_pair_links{", b"dmaconn_pair_verified{")


def run_once(cli, replay):
    """Reads the document from the pipe in large blocks, counting bytes and
    the series of each pair metric (lines starting with its name)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DMACONN_")}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env["DMACONN_QUIET"] = "1"
    counts = dict.fromkeys(NAMES, 0)
    keep = max(len(n) for n in NAMES) + 1
    size, tail = 0, b"\n"
    start = time.perf_counter()
    p = subprocess.Popen([cli, "--replay", replay, "--format", "prometheus"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env)
    while True:
        chunk = p.stdout.read(1 << 22)
        if not chunk:
            break
        size += len(chunk)
        block = tail + chunk
        for name in NAMES:
            counts[name] += block.count(b"\n" + name)
        tail = block[-keep:]  # a name cut by the block's end is counted with the next
        for name in NAMES:
            counts[name] -= tail.count(b"\n" + name)
    _, status, usage = os.wait4(p.pid, 0)
    seconds = time.perf_counter() - start
    series = {n.decode().rstrip("{"): c for n, c in counts.items()}
    return {"exit": os.waitstatus_to_exitcode(status), "seconds": round(seconds, 3),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "bytes": size, "series": series}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("counts", nargs="*", type=int, default=list(DEFAULT_COUNTS))
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=None, help="directory for prometheus_scale.json (default: print only)")
    ap.add_argument("--runs", type=int, default=1, help="runs per N; medians are reported")
    args = ap.parse_args(argv[1:])
    cli = os.path.join(os.path.abspath(args.build), "dmaconn")
    rows = []
    with tempfile.TemporaryDirectory(prefix="dmaconn-prom-") as tmp:
        print("%6s %9s %9s %10s %14s %12s %12s %12s" % ("N", "time s", "CPU s", "peak MB", "bytes",
                                                         "connectivity", "links", "bytes/pair"))
        for n in args.counts:
            replay = os.path.join(tmp, "nvswitch-%d.json" % n)
            with open(replay, "w") as f:
                json.dump(gen_topologies.topology(n, p2p=True, rows=True), f)
            runs = [run_once(cli, replay) for _ in range(max(1, args.runs))]
            r = dict(runs[0], n=n, runs=len(runs), seconds=statistics.median(x["seconds"] for x in runs),
                     cpu_seconds=statistics.median(x["cpu_seconds"] for x in runs),
                     peak_rss_mb=statistics.median(x["peak_rss_mb"] for x in runs),
                     exit=max(x["exit"] for x in runs), all_seconds=[x["seconds"] for x in runs])
            rows.append(r)
            pairs = r["series"].get("dmaconn_pair_connectivity", 0)
            print("%6d %9.3f %9.3f %10.1f %14d %12d %12d %12.1f%s" % (
                n, r["seconds"], r["cpu_seconds"], r["peak_rss_mb"], r["bytes"], pairs, r["series"].get("dmaconn_pair_links", 0),
                r["bytes"] / pairs if pairs else 0, "" if r["exit"] == 0 else "  (exit %d)" % r["exit"]))
            sys.stdout.flush()
            os.unlink(replay)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "prometheus_scale.json"), "w") as f:
            json.dump({"cli": cli, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
