#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`dmaconn check --expect` against detection, at rack scale, on replays.

For each N, writes a replay of N NVSwitch-attached GPUs with every pair's
P2P answers as version 2 rows (bench/gen_topologies.py), then, per
expectation kind, in fresh processes round-robin:

  detect   dmaconn --replay R [-d cuda -c nvlink] --json -q > expect.json
  check    dmaconn check --expect expect.json --replay R   (the node against
           its own expectation: a self-check, every pair compared)

Kinds: "nvlink" (the expectation of -d cuda -c nvlink --json, a check of
one detector) and "all" (the plain --json: nvlink, p2p with every pair's
properties, verified).  Reports the median wall time of --repeats runs,
peak resident memory (wait4's ru_maxrss), the output's size, and
check/detect.  Writes check_scale.json (and prints a Markdown table) into
--out.  No GPU needed; no timing is asserted.

    python3 bench/check_scale.py [--build build] [--out bench] [--repeats 3]
                                 [--kinds nvlink,all] [N ...]   (default N: 576 2000)
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


def run_once(argv, out_path, timeout):
    """(status, seconds, peak RSS KiB, bytes written)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DMACONN_")}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    with open(out_path, "wb") as out:
        start = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=env)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                p.kill()
                pid, status, usage = os.wait4(p.pid, 0)
                return None, timeout, usage.ru_maxrss, 0
            time.sleep(0.005)
        seconds = time.perf_counter() - start
    return os.waitstatus_to_exitcode(status), seconds, usage.ru_maxrss, os.path.getsize(out_path)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--kinds", default="nvlink,all")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("counts", nargs="*", type=int, default=[576, 2000])
    args = ap.parse_args(argv)
    cli = os.path.abspath(os.path.join(args.build, "dmaconn"))
    kinds = args.kinds.split(",")
    rows = []
    with tempfile.TemporaryDirectory(prefix="dmaconn-check-scale-") as tmp:
        for n in args.counts:
            replay = os.path.join(tmp, "nvswitch-%d.json" % n)
            with open(replay, "w") as f:
                json.dump(gen_topologies.topology(n, p2p=True, rows=True), f)
            for kind in kinds:
                expect = os.path.join(tmp, "expect-%d-%s.json" % (n, kind))
                report = os.path.join(tmp, "report.txt")
                detect = [cli, "--replay", replay] + (["-d", "cuda", "-c", "nvlink"] if kind == "nvlink" else [])
                detect += ["--json", "-q"]
                check = [cli, "check", "--expect", expect, "--replay", replay]
                runs = {"detect": [], "check": []}
                for _ in range(args.repeats):
                    runs["detect"].append(run_once(detect, expect, args.timeout))
                    runs["check"].append(run_once(check, report, args.timeout))
                with open(report) as f:
                    first = f.readline().strip()
                row = {"gpus": n, "expectation": kind, "replay_bytes": os.path.getsize(replay),
                       "check_first_line": first[:200]}
                for step, rs in runs.items():
                    row[step] = {"status": [r[0] for r in rs],
                                 "seconds_median": statistics.median(r[1] for r in rs),
                                 "seconds": [round(r[1], 3) for r in rs],
                                 "peak_rss_kib_median": statistics.median(r[2] for r in rs),
                                 "output_bytes": rs[-1][3]}
                row["check_over_detect"] = row["check"]["seconds_median"] / row["detect"]["seconds_median"]
                rows.append(row)
                print("N=%d %s: detect %.2f s, %.0f MiB, %d bytes; check %.2f s, %.0f MiB, %d bytes; ratio %.2f"
                      % (n, kind, row["detect"]["seconds_median"], row["detect"]["peak_rss_kib_median"] / 1024,
                         row["detect"]["output_bytes"], row["check"]["seconds_median"],
                         row["check"]["peak_rss_kib_median"] / 1024, row["check"]["output_bytes"],
                         row["check_over_detect"]), flush=True)
    doc = {"command": "python3 bench/check_scale.py " + " ".join(argv), "repeats": args.repeats,
           "cpus": os.cpu_count(), "rows": rows}
    with open(os.path.join(args.out, "check_scale.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("\n| GPUs | expectation | its size | detect (s) | detect peak RSS | check (s) | check peak RSS | check / detect |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print("| %d | %s | %.1f MB | %.2f | %.0f MiB | %.2f | %.0f MiB | %.2f |"
              % (r["gpus"], r["expectation"], r["detect"]["output_bytes"] / 1e6, r["detect"]["seconds_median"],
                 r["detect"]["peak_rss_kib_median"] / 1024, r["check"]["seconds_median"],
                 r["check"]["peak_rss_kib_median"] / 1024, r["check_over_detect"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
