#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""dmaconn's first-detection benchmark: one run, fresh processes, sequential.

Measures, each in fresh processes (one discarded warm-up, then --runs runs):
the C API's first detection and cached call and peak RSS (build/bench/first_detect),
the same with the optimisations switched off (naive scan, parallel without
batching, serial with batching), the CLI process, the Python binding, PyTorch's
_detect_dma_connectivity first call, `nvidia-smi topo -m`, the raw-NVML floor
(build/bench/nvml_floor) and `dmaconn --verify`.  Then ratios against the
targets, and writes RESULTS.md, results.json and results.png into --out.

    python3 bench/run.py [--runs 20] [--build build] [--out bench] [--quick]

No step failing stops the others: failures and skips are written down.
Standard library only; matplotlib is used for the chart where some
interpreter has it.
"""

import argparse
import json
import os
import shutil
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

TORCH_PYTHONS = ("/opt/torch/.venv/bin/python3", "/opt/torch/.venv/bin/python")

PY_BINDING = r"""
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
import dmaconn
t1 = time.perf_counter()
r = dmaconn.detect("cuda", "nvlink")
t2 = time.perf_counter()
print(json.dumps({"import_ms": (t1 - t0) * 1e3, "detect_ms": (t2 - t1) * 1e3,
                  "n": len(r.matrix), "matrix": [list(row) for row in r.matrix]}))
""".strip()

PY_TORCH = r"""
import functools, json, time
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
def find(*paths):
    for p in paths:
        try:
            return functools.reduce(getattr, p.split("."), torch)
        except AttributeError:
            pass
    raise AttributeError("torch has none of " + ", ".join(paths))
detect = find("_C._distributed_c10d._detect_dma_connectivity", "distributed._detect_dma_connectivity")
cuda = find("_C._autograd.DeviceType", "_C.DeviceType").CUDA
t2 = time.perf_counter()
r = detect(cuda, "nvlink")
t3 = time.perf_counter()
m = [list(row) for row in r.matrix]
print(json.dumps({"import_ms": (t1 - t0) * 1e3, "detect_ms": (t3 - t2) * 1e3, "n": len(m), "matrix": m,
                  "torch": torch.__version__, "cuda_initialized_after": bool(torch.cuda.is_initialized())}))
""".strip()

FIND_TORCH = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('torch') else 3)"


class Step:
    """One thing measured: a command run in fresh processes."""

    def __init__(self, key, title, argv, env_extra=None, metrics=("wall_ms",), parse=None, runs=20,
                 timeout=60.0, budget_s=40.0, skip=None, display_argv=None, check=None):
        self.key, self.title, self.argv = key, title, argv
        self.env_extra = env_extra or {}
        self.metrics = metrics
        self.parse = parse
        self.runs = runs
        self.timeout = timeout
        self.budget_s = budget_s
        self.skip = skip
        self.display_argv = display_argv or argv
        self.check = check


def parse_json(stdout):
    return bl.last_json_line(stdout)


def check_verify(r):
    err = check_rc0(r)
    if not err and "no GPU was checked" in r["stdout"] + r["stderr"]:
        err = "checked no GPU: " + (r["stderr"].strip().splitlines() or [""])[-1]
    return err


def check_rc0(r):
    if r["rc"] != 0:
        tail = (r["stderr"].strip() or r["stdout"].strip()).splitlines()[-3:]
        return "exit status %s: %s" % (r["rc"], " / ".join(tail) if tail else "(no output)")
    return None


def run_step(step, deadline, steps_left, log):
    """Warm-up plus step.runs fresh processes; returns the step's record."""
    rec = {"title": step.title, "command": bl.shell_command(step.display_argv, step.env_extra),
           "runs_requested": step.runs, "status": "ok", "notes": [], "errors": [],
           "metrics": {m: [] for m in step.metrics}, "samples": []}
    if step.skip:
        rec["status"] = "skipped"
        rec["notes"].append(step.skip)
        log("  skipped: %s" % step.skip)
        return rec
    env = bl.base_env(**step.env_extra)
    runs = step.runs
    consecutive_failures = 0
    t_step = time.monotonic()
    # The step's share of time: its own budget, within what the whole run has
    # left once every later step keeps a few seconds.
    budget = max(0.0, min(step.budget_s, deadline - t_step - 5.0 * steps_left))
    i = -1  # -1: warm-up (not counted, not charged to the budget)
    t_measured = None
    while i < runs:
        if i >= 0 and t_measured is None:
            t_measured = time.monotonic()
        t_run = time.monotonic()
        r = bl.run_timed(step.argv, env=env, timeout=step.timeout)
        last = time.monotonic() - t_run
        err = r["error"] or (step.check or check_rc0)(r)
        values = {}
        if not err:
            values["wall_ms"] = r["wall_ms"]
            if step.parse:
                try:
                    values.update(step.parse(r["stdout"]))
                except Exception as e:
                    err = "unreadable output (%s): %s" % (e, r["stdout"].strip()[-200:] or "(empty)")
        if err:
            consecutive_failures += 1
            label = "warm-up" if i < 0 else "run %d" % (i + 1)
            if err not in [e.split(": ", 1)[-1] for e in rec["errors"]]:
                rec["errors"].append("%s: %s" % (label, err))
            log("  %s failed: %s" % (label, err))
            if consecutive_failures >= 3 or r["timed_out"]:
                rec["notes"].append("stopped after %s" % ("a time-out" if r["timed_out"]
                                                          else "3 failures in a row"))
                break
        else:
            consecutive_failures = 0
            if len(rec["samples"]) < 1:
                rec["samples"].append({"stdout": r["stdout"][-12000:], "stderr": r["stderr"][-2000:]})
            if i >= 0:
                for m in step.metrics:
                    if m in values and values[m] is not None:
                        rec["metrics"][m].append(values[m])
                if "extra" not in rec:
                    rec["extra"] = {k: v for k, v in values.items() if k not in step.metrics}
        i += 1
        # Stop early (keeping at least 3 runs) when one more would overrun the budget.
        done = len(rec["metrics"][step.metrics[0]]) if step.metrics else i
        if t_measured is not None and i < runs and done >= min(3, runs):
            if time.monotonic() - t_measured + last > budget:
                rec["notes"].append("stopped after %d of %d runs to stay within %.0f s (one run took %.2f s)"
                                    % (done, runs, budget, last))
                log("  " + rec["notes"][-1])
                break
    rec["runs"] = len(rec["metrics"][step.metrics[0]]) if step.metrics else 0
    rec["seconds"] = round(time.monotonic() - t_step, 2)
    rec["stats"] = {m: bl.summarize(v) for m, v in rec["metrics"].items() if v}
    if rec["runs"] == 0:
        rec["status"] = "failed"
    elif rec["errors"]:
        rec["status"] = "partial"
    return rec


def find_torch_python(explicit, log):
    cands = [explicit] if explicit else [sys.executable, *TORCH_PYTHONS, shutil.which("python3")]
    seen = set()
    for py in cands:
        if not py or py in seen or not os.path.exists(py):
            continue
        seen.add(py)
        r = bl.run_timed([py, "-c", FIND_TORCH], timeout=60)
        if r["rc"] == 0:
            return py, None
        log("  no torch in %s" % py)
    return None, "PyTorch is not installed (looked in %s)" % ", ".join(sorted(seen) or ["nothing"])


def build_steps(args, log):
    B = os.path.abspath(args.build)
    first_detect = os.path.join(B, "bench", "first_detect")
    floor = os.path.join(B, "bench", "nvml_floor")
    cli = os.path.join(B, "dmaconn")
    lib = os.path.join(B, "libdmaconn.so.0")
    pydir = os.path.join(bl.ROOT, "python")

    def need(*paths):
        missing = [p for p in paths if not os.path.exists(p)]
        return "not built: %s (run `make build`, or pass --build DIR)" % ", ".join(missing) if missing else None

    fd_metrics = ("first_ms", "cached_ns", "hwm_kb", "wall_ms")
    n, few = args.runs, args.verify_runs
    steps = [
        Step("nvml_floor", "raw-NVML floor (dlopen + nvmlInit_v2; + count, handles, link states)", [floor],
             metrics=("init_ms", "floor_ms", "open_ms", "nvmlinit_ms", "wall_ms"), parse=parse_json, runs=n, skip=need(floor),
             display_argv=[bl.rel(floor)]),
        Step("c_api", "dmaconn C API, first detection (parallel, batched)", [first_detect],
             metrics=fd_metrics, parse=parse_json, runs=n, skip=need(first_detect),
             display_argv=[bl.rel(first_detect)]),
        Step("naive", "naive scan: serial, link by link", [first_detect],
             env_extra={"DMACONN_NVML_THREADS": 1, "DMACONN_NVML_NO_BATCH": 1}, metrics=fd_metrics,
             parse=parse_json, runs=n, skip=need(first_detect), display_argv=[bl.rel(first_detect)]),
        Step("nobatch", "parallel, link by link (no field batch)", [first_detect],
             env_extra={"DMACONN_NVML_NO_BATCH": 1}, metrics=fd_metrics, parse=parse_json, runs=n,
             skip=need(first_detect), display_argv=[bl.rel(first_detect)]),
        Step("serial", "serial, batched (one thread)", [first_detect],
             env_extra={"DMACONN_NVML_THREADS": 1}, metrics=fd_metrics, parse=parse_json, runs=n,
             skip=need(first_detect), display_argv=[bl.rel(first_detect)]),
        Step("p2p", "dmaconn C API, first cuda/p2p detection (parallel rows)", [first_detect, "p2p"],
             metrics=fd_metrics, parse=parse_json, runs=n, skip=need(first_detect),
             display_argv=[bl.rel(first_detect), "p2p"]),
        Step("p2p_serial", "first cuda/p2p detection, serial (one thread)", [first_detect, "p2p"],
             env_extra={"DMACONN_NVML_THREADS": 1}, metrics=fd_metrics, parse=parse_json, runs=n,
             skip=need(first_detect), display_argv=[bl.rel(first_detect), "p2p"]),
        Step("cli", "CLI process `dmaconn -d cuda -c nvlink`", [cli, "-d", "cuda", "-c", "nvlink"], runs=n,
             skip=need(cli), display_argv=[bl.rel(cli), "-d", "cuda", "-c", "nvlink"]),
    ]
    smi = shutil.which("nvidia-smi")
    steps.append(Step("nvidia_smi_topo", "`nvidia-smi topo -m` process", [smi or "nvidia-smi", "topo", "-m"],
                      runs=n, skip=None if smi else "nvidia-smi is not installed",
                      display_argv=["nvidia-smi", "topo", "-m"]))
    py = args.python or sys.executable
    steps.append(Step("python", "Python binding: fresh `python3 -c`, import dmaconn, dmaconn.detect()",
                      [py, "-c", PY_BINDING, pydir], env_extra={"DMACONN_LIBRARY": lib},
                      metrics=("detect_ms", "import_ms", "wall_ms"), parse=parse_json, runs=n,
                      skip=need(lib), display_argv=[py, "-c", "<PY_BINDING below>", bl.rel(pydir)]))
    if args.no_torch:
        tpy, why = None, "--no-torch given"
    else:
        tpy, why = find_torch_python(args.torch_python, log)
    steps.append(Step("torch", "PyTorch `_detect_dma_connectivity(CUDA, \"nvlink\")` first call, after import torch",
                      [tpy or "python3", "-c", PY_TORCH], metrics=("detect_ms", "import_ms", "wall_ms"),
                      parse=parse_json, runs=n, timeout=180, budget_s=args.torch_budget, skip=why,
                      display_argv=[tpy or "python3", "-c", "<PY_TORCH below>"]))
    probe = os.path.join(B, "bench", "nvml_probe")
    steps.append(Step("nvml_probe", "where NVML's time goes (`nvml_probe`, read by hand)", [probe], runs=1,
                      budget_s=30, skip=need(probe), display_argv=[bl.rel(probe)]))
    steps.append(Step("verify", "`dmaconn --verify` (every pair, helper process)", [cli, "--verify"], runs=few,
                      timeout=180, budget_s=60, skip=need(cli), display_argv=[bl.rel(cli), "--verify"],
                      check=check_verify))
    return steps, tpy


# ------------------------------------------------------------------ analysis

def med(results, key, metric):
    st = results.get(key, {}).get("stats", {}).get(metric)
    return st["median"] if st else None


def q(results, key, metric, which):
    st = results.get(key, {}).get("stats", {}).get(metric)
    return st[which] if st else None


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def analyse(results):
    """Ratios and targets, from medians (and a conservative pairing of quartiles)."""
    d = lambda w: q(results, "c_api", "first_ms", w)  # noqa: E731
    first = med(results, "c_api", "first_ms")
    torch = med(results, "torch", "detect_ms")
    init = med(results, "nvml_floor", "init_ms")
    floor = med(results, "nvml_floor", "floor_ms")
    cli = med(results, "cli", "wall_ms")
    smi = med(results, "nvidia_smi_topo", "wall_ms")
    cached = med(results, "c_api", "cached_ns")
    pyd = med(results, "python", "detect_ms")
    ratios = [
        ("dmaconn first detection / PyTorch first call", ratio(first, torch),
         ratio(d("p75"), q(results, "torch", "detect_ms", "p25"))),
        ("PyTorch first call / dmaconn first detection (speed-up)", ratio(torch, first),
         ratio(q(results, "torch", "detect_ms", "p25"), d("p75"))),
        ("PyTorch first call / Python binding's dmaconn.detect() (speed-up)", ratio(torch, pyd),
         ratio(q(results, "torch", "detect_ms", "p25"), q(results, "python", "detect_ms", "p75"))),
        ("dmaconn first detection / bare nvmlInit_v2 (dlopen + init)", ratio(first, init),
         ratio(d("p75"), q(results, "nvml_floor", "init_ms", "p25"))),
        ("dmaconn first detection / the nvmlInit_v2 call alone (no dlopen)",
         ratio(first, med(results, "nvml_floor", "nvmlinit_ms")),
         ratio(d("p75"), q(results, "nvml_floor", "nvmlinit_ms", "p25"))),
        ("dmaconn first detection / raw-NVML floor", ratio(first, floor),
         ratio(d("p75"), q(results, "nvml_floor", "floor_ms", "p25"))),
        ("CLI process / `nvidia-smi topo -m` process", ratio(cli, smi),
         ratio(q(results, "cli", "wall_ms", "p75"), q(results, "nvidia_smi_topo", "wall_ms", "p25"))),
        ("naive scan / optimised (speed-up of the optimisations)", ratio(med(results, "naive", "first_ms"), first),
         None),
        ("parallel without batching / parallel with batching (>1: batching pays)",
         ratio(med(results, "nobatch", "first_ms"), first), None),
        ("serial batched / parallel batched (>1: threads pay)", ratio(med(results, "serial", "first_ms"), first),
         None),
        ("cuda/p2p serial / parallel (>1: parallel rows pay)",
         ratio(med(results, "p2p_serial", "first_ms"), med(results, "p2p", "first_ms")), None),
    ]

    def verdict(ok, measured):
        if measured is None:
            return "not measured"
        return "met" if ok else "NOT met"

    targets = [
        ("first detection <= 1.25x a bare nvmlInit_v2", ratio(first, init),
         "%.2fx" % ratio(first, init) if ratio(first, init) else "—",
         verdict(ratio(first, init) is not None and ratio(first, init) <= 1.25, ratio(first, init))),
        (">= 30x faster than PyTorch's first call", ratio(torch, first),
         "%.1fx faster" % ratio(torch, first) if ratio(torch, first) else "—",
         verdict(ratio(torch, first) is not None and ratio(torch, first) >= 30, ratio(torch, first))),
        ("CLI process faster than `nvidia-smi topo -m`", ratio(cli, smi),
         "%s ms vs %s ms (%.2fx)" % (bl.fmt_ms(cli), bl.fmt_ms(smi), ratio(cli, smi)) if ratio(cli, smi) else "—",
         verdict(ratio(cli, smi) is not None and ratio(cli, smi) < 1, ratio(cli, smi))),
        ("cached call <= 1 us", cached, "%.0f ns" % cached if cached is not None else "—",
         verdict(cached is not None and cached <= 1000, cached)),
    ]
    return ratios, targets


# ------------------------------------------------------------------- report

ROWS = [  # key, metric, label, unit
    ("c_api", "first_ms", "dmaconn C API: first detection", "ms"),
    ("c_api", "cached_ns", "dmaconn C API: cached call", "ns"),
    ("c_api", "hwm_kb", "dmaconn C API: peak RSS of the process (VmHWM)", "KiB"),
    ("naive", "first_ms", "naive scan (THREADS=1 NO_BATCH=1): first detection", "ms"),
    ("nobatch", "first_ms", "parallel, no batch (NO_BATCH=1): first detection", "ms"),
    ("serial", "first_ms", "serial, batched (THREADS=1): first detection", "ms"),
    ("p2p", "first_ms", "cuda/p2p (`first_detect p2p`): first detection", "ms"),
    ("p2p_serial", "first_ms", "cuda/p2p serial (THREADS=1): first detection", "ms"),
    ("cli", "wall_ms", "CLI `dmaconn -d cuda -c nvlink`: process wall", "ms"),
    ("python", "detect_ms", "Python binding: dmaconn.detect() in-process", "ms"),
    ("python", "import_ms", "Python binding: import dmaconn", "ms"),
    ("python", "wall_ms", "Python binding: whole `python3 -c` process", "ms"),
    ("torch", "detect_ms", "PyTorch _detect_dma_connectivity first call", "ms"),
    ("torch", "import_ms", "PyTorch: import torch", "ms"),
    ("torch", "wall_ms", "PyTorch: whole process", "ms"),
    ("nvidia_smi_topo", "wall_ms", "`nvidia-smi topo -m`: process wall", "ms"),
    ("nvml_floor", "init_ms", "NVML: dlopen + nvmlInit_v2", "ms"),
    ("nvml_floor", "open_ms", "NVML: dlopen + dlsym of dmaconn's symbols (part of the above)", "ms"),
    ("nvml_floor", "nvmlinit_ms", "NVML: the nvmlInit_v2 call alone (part of the above)", "ms"),
    ("nvml_floor", "floor_ms", "raw-NVML floor (init, count, handles, link states; serial)", "ms"),
    ("verify", "wall_ms", "`dmaconn --verify`: process wall", "ms"),
]


def fmt(v, unit):
    if v is None:
        return "—"
    if unit == "ms":
        return bl.fmt_ms(v)
    return "%.0f" % v if v >= 10 else "%.1f" % v


def chart_spec(results, meta):
    groups = {"c_api": "dmaconn", "naive": "variant", "nobatch": "variant", "serial": "variant", "cli": "dmaconn",
              "p2p": "dmaconn", "p2p_serial": "variant",
              "python": "dmaconn", "verify": "dmaconn", "torch": "baseline", "nvidia_smi_topo": "baseline",
              "nvml_floor": "nvml"}
    picks = [("c_api", "first_ms", "C API first detection"), ("c_api", "cached_ns", "C API cached call"),
             ("naive", "first_ms", "naive scan (serial, per link)"), ("nobatch", "first_ms", "parallel, no batch"),
             ("serial", "first_ms", "serial, batched"), ("p2p", "first_ms", "C API first cuda/p2p"),
             ("cli", "wall_ms", "CLI process (wall)"),
             ("python", "detect_ms", "Python dmaconn.detect()"), ("python", "wall_ms", "Python process (wall)"),
             ("verify", "wall_ms", "dmaconn --verify (wall)"),
             ("torch", "detect_ms", "PyTorch first call"), ("torch", "wall_ms", "PyTorch process (wall)"),
             ("nvidia_smi_topo", "wall_ms", "nvidia-smi topo -m (wall)"),
             ("nvml_floor", "init_ms", "dlopen + nvmlInit_v2"), ("nvml_floor", "floor_ms", "raw-NVML floor")]
    items = []
    for key, metric, label in picks:
        st = results.get(key, {}).get("stats", {}).get(metric)
        if not st or st["median"] <= 0:
            continue
        scale = 1e-6 if metric.endswith("_ns") else 1.0
        text = ("%.0f ns" % st["median"]) if scale != 1.0 else "%s ms" % bl.fmt_ms(st["median"])
        items.append({"label": label, "value": st["median"] * scale, "lo": st["min"] * scale,
                      "hi": st["max"] * scale, "group": groups[key], "text": text})
    title = "First detection, fresh processes: medians of %d runs, whiskers min-max" % meta["runs"]
    if meta.get("replay"):
        title += " (REPLAY, not hardware)"
    return {"type": "bars", "title": title, "xlabel": "milliseconds (log scale)", "log": True, "items": items,
            "legend": {"dmaconn": "dmaconn", "variant": "dmaconn, some optimisations off",
                       "baseline": "alternatives", "nvml": "NVML reference"}}


def write_markdown(path, meta, results, ratios, targets, chart_note):
    L = []
    w = L.append
    w("# dmaconn benchmark results")
    w("")
    if meta.get("replay"):
        w("> **REPLAY RUN**: `DMACONN_REPLAY=%s` was set, so every dmaconn number below comes from the fake "
          "NVML, not from hardware. A smoke test of the harness, not a result." % meta["replay"])
        w("")
    if meta.get("devices") == 0:
        w("> **No GPU was detected** by `first_detect` (0 devices): dmaconn's numbers time a detection that found "
          "nothing (NVML missing or failing), not a real one. See the warnings in results.json.")
        w("")
    if meta.get("quick"):
        w("> `--quick`: a smoke test with few runs; not for quoting.")
        w("")
    w("Generated by `%s` on %s (%.0f s). Each figure is measured in fresh processes, run one after "
      "another, after one discarded warm-up run of the same command. Medians, with min–max and the "
      "interquartile range (p25–p75)." % (meta["invocation"], meta["machine"].get("date_utc", "?"), meta["seconds"]))
    w("")
    w("## Targets")
    w("")
    w("| target | measured | verdict |")
    w("| --- | --- | --- |")
    for name, _, shown, verdict in targets:
        w("| %s | %s | %s |" % (bl.md_escape(name), bl.md_escape(shown), "**%s**" % verdict))
    w("")
    w("## Results")
    w("")
    w("| measurement | unit | median | min – max | p25 – p75 | runs |")
    w("| --- | --- | ---: | ---: | ---: | ---: |")
    for key, metric, label, unit in ROWS:
        rec = results.get(key)
        if not rec:
            continue
        st = rec.get("stats", {}).get(metric)
        if st:
            w("| %s | %s | %s | %s – %s | %s – %s | %d |" % (
                bl.md_escape(label), unit, fmt(st["median"], unit), fmt(st["min"], unit), fmt(st["max"], unit),
                fmt(st["p25"], unit), fmt(st["p75"], unit), st["n"]))
        else:
            w("| %s | %s | %s | | | 0 |" % (bl.md_escape(label), unit, rec["status"]))
    w("")
    w("## Ratios (from the same run)")
    w("")
    w("Ratio of medians; \"conservative\" pairs dmaconn's p75 with the other side's p25 (or the reverse for a "
      "speed-up), so it errs against dmaconn.")
    w("")
    w("| ratio | of medians | conservative |")
    w("| --- | ---: | ---: |")
    for name, r, c in ratios:
        w("| %s | %s | %s |" % (bl.md_escape(name), "%.2f" % r if r is not None else "—",
                                "%.2f" % c if c is not None else "—"))
    w("")
    problems = [(k, r) for k, r in results.items() if r["status"] != "ok" or r["notes"]]
    w("## Skipped, failed and shortened steps")
    w("")
    if not problems:
        w("None: every step ran all its runs.")
    for key, rec in problems:
        w("- **%s** (`%s`): %s%s" % (key, rec["status"], "; ".join(rec["notes"]) or "—",
                                     "".join("\n  - %s" % bl.md_escape(e) for e in rec["errors"])))
    w("")
    agree = meta.get("matrices")
    if agree:
        w("## What was detected")
        w("")
        for line in agree:
            w("- %s" % line)
        w("")
    w("## Machine")
    w("")
    m = meta["machine"]
    for k in ("date_utc", "hostname", "os", "kernel", "cpu_model", "cpu_count", "cpus_usable", "memory_gib", "loadavg", "nice",
              "driver_version", "nvidia_driver_proc", "python", "dmaconn_version", "git"):
        if m.get(k) is not None:
            w("- %s: `%s`" % (k, m[k]))
    if meta.get("torch_version"):
        w("- torch: `%s` (%s)" % (meta["torch_version"], meta.get("torch_python")))
    if m.get("environment"):
        w("- environment: `%s`" % " ".join("%s=%s" % kv for kv in sorted(m["environment"].items())))
    w("")
    w("`nvidia-smi -L`:")
    w("")
    w("```")
    w(m.get("nvidia_smi_L") or "(nvidia-smi not available)")
    w("```")
    if m.get("gpus"):
        w("")
        w("`nvidia-smi --query-gpu=index,name,driver_version,persistence_mode,pci.bus_id`:")
        w("")
        w("```")
        w(m["gpus"])
        w("```")
    w("")
    w("## Exact commands")
    w("")
    w("Run from `%s`; every command runs once as warm-up (discarded), then `runs` times." % bl.ROOT)
    w("")
    w("| step | command | runs |")
    w("| --- | --- | ---: |")
    for key, rec in results.items():
        w("| %s | `%s` | %s |" % (key, bl.md_escape(rec["command"]), rec.get("runs", 0)))
    w("")
    w("`PY_BINDING` (argument: the binding's directory):")
    w("")
    w("```python")
    w(PY_BINDING)
    w("```")
    w("")
    w("`PY_TORCH`:")
    w("")
    w("```python")
    w(PY_TORCH)
    w("```")
    w("")
    for key in ("cli", "verify", "nvidia_smi_topo", "nvml_probe"):
        s = results.get(key, {}).get("samples")
        if s:
            w("Output of `%s` (first successful run):" % results[key]["command"])
            w("")
            w("```")
            w((s[0]["stdout"] + s[0]["stderr"]).strip()[:10000] or "(nothing)")
            w("```")
            w("")
    w("Chart: `results.png` (%s). Raw data: `results.json`." % chart_note)
    w("")
    with open(path, "w") as f:
        f.write("\n".join(L))


def matrices_summary(results):
    lines = []
    mats = {}
    for key, label in (("python", "dmaconn"), ("torch", "PyTorch")):
        ex = results.get(key, {}).get("extra") or {}
        if "matrix" in ex:
            mats[label] = ex["matrix"]
            lines.append("%s: %d device(s), matrix `%s`" % (label, ex.get("n", len(ex["matrix"])),
                                                           json.dumps(ex["matrix"])))
    ex = results.get("c_api", {}).get("extra") or {}
    if "n" in ex:
        lines.append("first_detect: %d device(s), %d NVLinks summed over the matrix" % (ex["n"], ex.get("links", 0)))
    if len(mats) == 2:
        lines.append("dmaconn and PyTorch matrices agree: **%s**" % ("yes" if mats["dmaconn"] == mats["PyTorch"]
                                                                    else "NO"))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description="dmaconn first-detection benchmark (see bench/README.md)")
    ap.add_argument("--runs", type=int, default=None, help="measured runs per step (default 20; --quick: 3)")
    ap.add_argument("--verify-runs", type=int, default=None, help="runs of dmaconn --verify (default 3; --quick: 1)")
    ap.add_argument("--build", default=os.path.join(bl.ROOT, "build"), help="CMake build directory (default build)")
    ap.add_argument("--out", default=bl.HERE, help="where RESULTS.md, results.json, results.png go (default bench/)")
    ap.add_argument("--quick", action="store_true", help="smoke test: few runs")
    ap.add_argument("--python", help="interpreter for the binding's runs (default: this one)")
    ap.add_argument("--torch-python", help="interpreter that has torch (default: this one, else /opt/torch/.venv)")
    ap.add_argument("--no-torch", action="store_true", help="skip PyTorch")
    ap.add_argument("--torch-budget", type=float, default=150.0, help="seconds PyTorch's runs may take (default 150)")
    ap.add_argument("--max-seconds", type=float, default=230.0, help="whole-run budget; steps shrink to fit")
    args = ap.parse_args(argv)
    if args.runs is None:
        args.runs = 3 if args.quick else 20
    if args.verify_runs is None:
        args.verify_runs = 1 if args.quick else 3
    args.runs = max(1, args.runs)
    args.verify_runs = max(1, args.verify_runs)
    os.makedirs(args.out, exist_ok=True)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    t0 = time.monotonic()
    deadline = t0 + args.max_seconds
    invocation = "python3 bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    meta = {"invocation": invocation.strip(), "runs": args.runs, "quick": args.quick,
            "replay": os.environ.get("DMACONN_REPLAY") or None, "build": os.path.abspath(args.build)}
    log("machine facts ...")
    meta["machine"] = bl.machine_info(os.path.abspath(args.build))
    results = {}
    try:
        steps, tpy = build_steps(args, log)
    except Exception as e:
        steps, tpy = [], None
        log("cannot set up the steps: %s" % e)
        meta["setup_error"] = traceback.format_exc()
    meta["torch_python"] = tpy
    for k, step in enumerate(steps):
        log("%s: %s" % (step.key, step.title))
        try:
            results[step.key] = run_step(step, deadline, len(steps) - k - 1, log)
        except Exception as e:  # the harness's own bug: write it down, go on
            results[step.key] = {"title": step.title, "command": bl.shell_command(step.display_argv, step.env_extra),
                                 "status": "failed", "notes": ["harness error"], "errors": ["%s: %s" % (type(e).__name__, e)],
                                 "metrics": {}, "stats": {}, "runs": 0}
            log(traceback.format_exc())
        rec = results[step.key]
        for m, st in rec.get("stats", {}).items():
            log("  %-10s median %10.3f  [%0.3f .. %0.3f] n=%d" % (m, st["median"], st["min"], st["max"], st["n"]))
    tex = results.get("torch", {}).get("extra") or {}
    meta["torch_version"] = tex.get("torch")
    if "cuda_initialized_after" in tex:
        meta["torch_cuda_initialized_after"] = tex["cuda_initialized_after"]
    meta["matrices"] = matrices_summary(results)
    meta["devices"] = (results.get("c_api", {}).get("extra") or {}).get("n")
    ratios, targets = analyse(results)
    meta["seconds"] = time.monotonic() - t0

    chart_note = "not drawn"
    png = os.path.join(args.out, "results.png")
    try:
        spec = chart_spec(results, meta)
        if spec["items"]:
            chart_note = "drawn with " + bl.draw(spec, png, [tpy, *TORCH_PYTHONS])
        else:
            chart_note = "not drawn: nothing was measured"
    except Exception as e:
        chart_note = "not drawn: %s: %s" % (type(e).__name__, e)
        log(traceback.format_exc())

    out_json = {"meta": meta, "steps": results,
                "ratios": [{"name": n, "median_ratio": r, "conservative": c} for n, r, c in ratios],
                "targets": [{"target": n, "value": v, "measured": s, "verdict": vd} for n, v, s, vd in targets],
                "chart": chart_note}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(out_json, f, indent=1, default=str)
        f.write("\n")
    write_markdown(os.path.join(args.out, "RESULTS.md"), meta, results, ratios, targets, chart_note)
    log("")
    for name, _, shown, verdict in targets:
        log("%-48s %-28s %s" % (name, shown, verdict))
    log("wrote %s, results.json, results.png (%s) in %.0f s" % (os.path.join(args.out, "RESULTS.md"), chart_note,
                                                                 meta["seconds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
