#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""First detection of two builds side by side: fresh processes, medians.

Runs each build's `bench/first_detect` for the given pairs, alternating
between the builds run by run (so that drift in the machine touches both
alike), and prints the medians and the ratio new/old per pair.

usage: bench/compare_builds.py OLD_BUILD NEW_BUILD [--runs 20] [--pairs nvlink,p2p]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def first_ms(build, pair):
    out = subprocess.run([os.path.join(build, "bench", "first_detect"), pair], capture_output=True,
                         text=True, check=True, env=dict(os.environ, DMACONN_QUIET="1"))
    return json.loads(out.stdout.strip().splitlines()[-1])["first_ms"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--pairs", default="nvlink,p2p", help="first_detect arguments, comma-separated")
    a = ap.parse_args(argv)
    pairs = a.pairs.split(",")
    samples = {(b, p): [] for b in ("old", "new") for p in pairs}
    for p in pairs:  # warm-up: page cache
        first_ms(a.old, p)
        first_ms(a.new, p)
    for _ in range(a.runs):
        for p in pairs:
            samples[("old", p)].append(first_ms(a.old, p))
            samples[("new", p)].append(first_ms(a.new, p))
    print("| pair | old median ms | new median ms | new/old |")
    print("| --- | ---: | ---: | ---: |")
    for p in pairs:
        o = statistics.median(samples[("old", p)])
        n = statistics.median(samples[("new", p)])
        print("| %s | %.2f | %.2f | %.2f |" % (p, o, n, n / o))
    return 0


if __name__ == "__main__":
    sys.exit(main())
