#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""First detection of two builds side by side: fresh processes, medians.

Runs each build's `bench/first_detect` for the given pairs, alternating
between the builds run by run (so that drift in the machine touches both
alike), and prints the medians and the ratio new/old per pair.

With --cli ARGS, it times whole runs of each build's `dmaconn ARGS` instead
(wall clock of a fresh process, start-up included), the same way for both.

usage: bench/compare_builds.py OLD_BUILD NEW_BUILD [--runs 20] [--pairs nvlink,p2p] [--cli "-q --json"]
"""
import argparse
import json
import os
import statistics
import shlex
import subprocess
import sys
import time


def first_ms(build, pair):
    out = subprocess.run([os.path.join(build, "bench", "first_detect"), pair], capture_output=True,
                         text=True, check=True, env=dict(os.environ, DMACONN_QUIET="1"))
    return json.loads(out.stdout.strip().splitlines()[-1])["first_ms"]


def cli_ms(build, args):
    t0 = time.perf_counter()
    subprocess.run([os.path.join(build, "dmaconn")] + shlex.split(args), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False, env=dict(os.environ, DMACONN_NO_CACHE="1"))
    return (time.perf_counter() - t0) * 1000.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--pairs", default="nvlink,p2p", help="first_detect arguments, comma-separated")
    ap.add_argument("--cli", default=None, help="time `dmaconn CLI` runs instead of first detections")
    a = ap.parse_args(argv)
    pairs = a.pairs.split(",")
    measure = first_ms
    if a.cli is not None:
        pairs = [a.cli]
        measure = cli_ms
    samples = {(b, p): [] for b in ("old", "new") for p in pairs}
    for p in pairs:  # warm-up: page cache
        measure(a.old, p)
        measure(a.new, p)
    for _ in range(a.runs):
        for p in pairs:
            samples[("old", p)].append(measure(a.old, p))
            samples[("new", p)].append(measure(a.new, p))
    print("| %s |" % ("dmaconn arguments" if a.cli is not None else "pair") + " old median ms | new median ms | new/old |")
    print("| --- | ---: | ---: | ---: |")
    for p in pairs:
        o = statistics.median(samples[("old", p)])
        n = statistics.median(samples[("new", p)])
        print("| %s | %.2f | %.2f | %.2f |" % (p, o, n, n / o))
    return 0


if __name__ == "__main__":
    sys.exit(main())
