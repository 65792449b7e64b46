#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A bare run against each detector alone: fresh processes, medians.

Each vendor is discovered once per process, so detecting every registered
pair (what a bare `dmaconn --all` does) should cost little more than the
slowest pair detected alone.  This runs `first_detect SPEC` for each pair
and for `all`, and the CLI bare and per pair, round-robin (so that drift
in the machine touches every step alike), and prints medians and the ratio
of `all` to the slowest single pair.

usage: bench/bare.py [--build build] [--runs 20] [--json FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PAIRS = ["cuda/nvlink", "cuda/p2p", "rocm/infinity_fabric", "rocm/p2p", "xpu/p2p", "xpu/xelink"]


def library_run(build, spec):
    out = subprocess.run([os.path.join(build, "bench", "first_detect"), spec], capture_output=True,
                         text=True, check=True, env=dict(os.environ, DMACONN_QUIET="1"))
    return json.loads(out.stdout.strip().splitlines()[-1])["first_ms"]


def cli_run(build, args):
    t0 = time.perf_counter()
    subprocess.run([os.path.join(build, "dmaconn"), "-q"] + args, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - t0) * 1e3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--json", help="write the samples and medians here")
    a = ap.parse_args(argv)

    steps = [("lib " + p, lambda p=p: library_run(a.build, p)) for p in PAIRS]
    steps.append(("lib all", lambda: library_run(a.build, "all")))
    steps += [("cli -d %s -c %s" % tuple(p.split("/")), lambda p=p: cli_run(a.build, ["-d", p.split("/")[0],
                                                                               "-c", p.split("/")[1]]))
              for p in PAIRS]
    steps.append(("cli --all", lambda: cli_run(a.build, ["--all"])))
    steps.append(("cli (bare)", lambda: cli_run(a.build, [])))

    samples = {name: [] for name, _ in steps}
    for name, fn in steps:  # one warm-up each: page cache, not measured
        fn()
    for _ in range(a.runs):
        for name, fn in steps:
            samples[name].append(fn())
    med = {name: statistics.median(v) for name, v in samples.items()}

    print("| step | median ms | min | max |")
    print("| --- | ---: | ---: | ---: |")
    for name, _ in steps:
        v = samples[name]
        print("| %s | %.2f | %.2f | %.2f |" % (name, med[name], min(v), max(v)))
    slow_lib = max(PAIRS, key=lambda p: med["lib " + p])
    slow_cli = max(PAIRS, key=lambda p: med["cli -d %s -c %s" % tuple(p.split("/"))])
    ratio_lib = med["lib all"] / med["lib " + slow_lib]
    ratio_cli = med["cli --all"] / med["cli -d %s -c %s" % tuple(slow_cli.split("/"))]
    print("\nlibrary: every pair %.2f ms = %.2fx the slowest pair alone (%s, %.2f ms)"
          % (med["lib all"], ratio_lib, slow_lib, med["lib " + slow_lib]))
    print("CLI: --all %.2f ms = %.2fx the slowest pair alone (%s)" % (med["cli --all"], ratio_cli, slow_cli))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": a.runs, "samples": samples, "median_ms": med, "ratio_library": ratio_lib,
                       "ratio_cli": ratio_cli}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
