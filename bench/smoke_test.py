#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Smoke test of the benchmark harness (CTest `bench_smoke`): runs
bench/run.py --quick and bench/scaling.py --quick against a replay and checks
that they finish and write well-formed reports.  It asserts no timing: a
benchmark is not a test.

    python3 bench/smoke_test.py BUILD_DIR
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
STATUSES = {"ok", "partial", "failed", "skipped"}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"


def main(argv):
    build = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(ROOT, "build"))
    env = dict(os.environ, DMACONN_REPLAY=os.path.join(ROOT, "tests", "topologies", "h200x2.json"),
               DMACONN_BENCH_BUILTIN_CHARTS="1", DMACONN_QUIET="1")
    for k in ("DMACONN_NVML_THREADS", "DMACONN_NVML_NO_BATCH", "DMACONN_REPLAY_LATENCY_US",
              "DMACONN_REPLAY_ATTACH_US"):
        env.pop(k, None)
    with tempfile.TemporaryDirectory(prefix="dmaconn-bench-smoke-") as out:
        subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "--quick", "--runs", "2", "--no-torch",
                        "--build", build, "--out", out], env=env, check=True, timeout=300)
        with open(os.path.join(out, "results.json")) as f:
            res = json.load(f)
        steps = res["steps"]
        for key in ("nvml_floor", "c_api", "naive", "nobatch", "serial", "p2p", "p2p_serial", "cli",
                    "nvidia_smi_topo", "python", "torch", "nvml_probe", "verify"):
            check(key in steps, "step %s missing" % key)
            check(steps[key]["status"] in STATUSES, "step %s: status %r" % (key, steps[key]["status"]))
        for key in ("c_api", "naive", "nobatch", "serial", "cli", "python"):
            check(steps[key]["status"] == "ok", "step %s: %s %s" % (key, steps[key]["status"], steps[key]["errors"]))
        check(steps["torch"]["status"] == "skipped", "torch not skipped with --no-torch")
        c = steps["c_api"]
        check(c["extra"]["n"] == 2 and c["extra"]["links"] == 36, "replayed 2x H200 not detected: %r" % c["extra"])
        for m in ("first_ms", "cached_ns", "hwm_kb"):
            check(c["stats"][m]["n"] == 2, "c_api %s: %r" % (m, c["stats"].get(m)))
        check(res["meta"]["replay"], "replay not recorded in the report")
        check(len(res["targets"]) == 4 and all(t["verdict"] in ("met", "NOT met", "not measured")
                                               for t in res["targets"]), "targets: %r" % res["targets"])
        md = open(os.path.join(out, "RESULTS.md")).read()
        for part in ("REPLAY RUN", "## Targets", "## Results", "## Ratios", "## Machine", "## Exact commands"):
            check(part in md, "RESULTS.md lacks %r" % part)
        check(is_png(os.path.join(out, "results.png")), "results.png is not a PNG")

        subprocess.run([sys.executable, os.path.join(HERE, "scaling.py"), "--quick", "--counts", "1", "2",
                        "--latency-us", "50", "--attach-us", "200", "--build", build, "--out", out],
                       env=env, check=True, timeout=300)
        with open(os.path.join(out, "scaling.json")) as f:
            sc = json.load(f)
        for cfg in ("latency", "attach", "cpu"):
            for key in ("naive", "serial", "nobatch", "threads8", "optimised"):
                for n in ("1", "2"):
                    cell = sc["data"][cfg][key][n]
                    check(cell["stats"] and not cell["errors"], "scaling %s/%s/%s: %r" % (cfg, key, n, cell))
        check("## Why the curves look like this" in open(os.path.join(out, "SCALING.md")).read(), "SCALING.md")
        check(is_png(os.path.join(out, "scaling.png")), "scaling.png is not a PNG")
    print("bench smoke: 1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
