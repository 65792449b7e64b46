#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""cuda/verified against a vLLM-style check, timed in the same run.

Times, as medians of fresh processes:
  - `dmaconn -d cuda -c verified --no-cache` (cold: the helper verifies
    every ordered pair);
  - `dmaconn -d cuda -c verified` with a warm verdict cache (the CLI's whole
    process; the helper does not run);
  - the vLLM-style check of bench/vllm_p2p_check.py, batched (vLLM today)
    and per pair (vLLM before it batched), from a caller with PyTorch
    imported.
and checks that the matrices agree.

Usage: verified_bench.py DMACONN [--runs N] [--vllm-runs N] [--json FILE]
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


def timed(cmd, env):
    start = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return time.perf_counter() - start, p


def matrix_of(p):
    doc = json.loads(p.stdout)
    return doc["results"][0]["matrix"] if doc.get("results") else None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dmaconn")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--vllm-runs", type=int, default=3)
    ap.add_argument("--json", dest="json_out")
    a = ap.parse_args(argv[1:])
    out = {"runs": a.runs, "vllm_runs": a.vllm_runs}
    cache = tempfile.mkdtemp(prefix="dmaconn-bench-cache-")
    os.chmod(cache, 0o700)
    env = dict(os.environ, DMACONN_CACHE_DIR=cache)
    env.pop("DMACONN_NO_CACHE", None)
    cmd = [a.dmaconn, "-d", "cuda", "-c", "verified", "--json", "-q"]

    cold, matrix = [], None
    for _ in range(a.runs):
        t, p = timed(cmd + ["--no-cache"], env)
        cold.append(t)
        matrix = matrix_of(p) if p.returncode == 0 else matrix
        out["cold_status"] = p.returncode
    timed(cmd, env)  # fills the cache
    cached = []
    for _ in range(a.runs):
        t, p = timed(cmd, env)
        cached.append(t)
        out["cached_matrix"] = matrix_of(p)
    out["cold_s"] = statistics.median(cold)
    out["cached_s"] = statistics.median(cached)
    out["cold_all"] = cold
    out["cached_all"] = cached
    out["matrix"] = matrix
    print("dmaconn cuda/verified, cold (--no-cache): median %.1f ms of %d (%.1f-%.1f)"
          % (1e3 * out["cold_s"], a.runs, 1e3 * min(cold), 1e3 * max(cold)))
    print("dmaconn cuda/verified, cached:           median %.2f ms of %d (%.2f-%.2f)"
          % (1e3 * out["cached_s"], a.runs, 1e3 * min(cached), 1e3 * max(cached)))
    print("dmaconn verified matrix: %s (cached run: %s)" % (matrix, out["cached_matrix"]))

    try:
        import torch  # noqa: F401  (the caller of vLLM's check has it imported)
        import vllm_p2p_check
    except Exception as e:  # no PyTorch: say so, the rest stands
        print("vLLM-style check: not run (%s)" % e)
        out["vllm"] = None
    else:
        out["vllm"] = {}
        for mode in ("batched", "per-pair"):
            times, vm, ok = [], None, None
            try:
                for _ in range(a.vllm_runs):
                    vm, t, ok = vllm_p2p_check.check(mode)
                    times.append(t)
            except Exception as e:
                print("vLLM-style check (%s): failed: %s" % (mode, str(e)[-600:]))
                continue
            out["vllm"][mode] = {"median_s": statistics.median(times), "all": times, "matrix": vm,
                                 "self_pairs_ok": ok}
            print("vLLM-style check (%s): median %.3f s of %d (%.3f-%.3f); matrix %s; self pairs %s; %s dmaconn"
                  % (mode, statistics.median(times), len(times), min(times), max(times), vm,
                     "ok" if ok else "FAILED", "agrees with" if vm == matrix else "DISAGREES with"))
        if out["vllm"].get("batched"):
            print("speed-up over the batched vLLM-style check: cold %.1fx, cached %.0fx"
                  % (out["vllm"]["batched"]["median_s"] / out["cold_s"],
                     out["vllm"]["batched"]["median_s"] / out["cached_s"]))
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
