# SPDX-License-Identifier: BSD-3-Clause
"""Shared helpers of bench/run.py and bench/scaling.py (stdlib only)."""

import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import chart  # noqa: E402

# Knobs of dmaconn's NVML backend a caller's environment must not leak into
# the runs that do not set them on purpose.
DMACONN_KNOBS = ("DMACONN_NVML_THREADS", "DMACONN_NVML_NO_BATCH")


def base_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in DMACONN_KNOBS}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def summarize(values):
    """median, spread (min/max, quartiles) and mean of a list of numbers."""
    v = sorted(values)
    if not v:
        return None
    if len(v) >= 2:
        q = statistics.quantiles(v, n=4, method="inclusive")
        p25, p75 = q[0], q[2]
    else:
        p25 = p75 = v[0]
    return {"n": len(v), "median": statistics.median(v), "min": v[0], "max": v[-1],
            "p25": p25, "p75": p75, "mean": statistics.fmean(v)}


def run_timed(argv, env=None, timeout=60.0):
    """Runs argv to completion; returns rc, wall_ms, stdout, stderr, timed_out, error."""
    res = {"rc": None, "wall_ms": None, "stdout": "", "stderr": "", "timed_out": False, "error": None}
    try:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    except OSError as e:
        res["error"] = "cannot start %s: %s" % (argv[0], e)
        return res
    try:
        out, err = p.communicate(timeout=timeout)
        res["wall_ms"] = (time.perf_counter() - t0) * 1e3
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        res["timed_out"] = True
        res["error"] = "timed out after %.0f s" % timeout
    res["rc"] = p.returncode
    res["stdout"] = out.decode("utf-8", "replace")
    res["stderr"] = err.decode("utf-8", "replace")
    return res


def last_json_line(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON line in the output")


def shell_command(argv, env_extra=None):
    """How a person would type it."""
    parts = ["%s=%s" % (k, shlex.quote(str(v))) for k, v in (env_extra or {}).items()]
    return " ".join(parts + [shlex.quote(a) for a in argv])


def rel(path):
    try:
        r = os.path.relpath(path, ROOT)
        return path if r.startswith("..") else r
    except ValueError:
        return path


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _capture(argv, timeout=20):
    if not shutil.which(argv[0]) and not os.path.exists(argv[0]):
        return None
    r = run_timed(argv, timeout=timeout)
    if r["rc"] != 0:
        return None
    return r["stdout"].strip()


def machine_info(build=None):
    """Everything RESULTS.md states about the machine; never raises."""
    info = {"date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    try:
        info["hostname"] = platform.node()
        info["kernel"] = platform.release()
        info["uname"] = " ".join(platform.uname())
        info["cpu_count"] = os.cpu_count()
        try:
            info["cpus_usable"] = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            pass
        for line in _read("/proc/cpuinfo").splitlines():
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
        for line in _read("/etc/os-release").splitlines():
            if line.startswith("PRETTY_NAME="):
                info["os"] = line.split("=", 1)[1].strip().strip('"')
        mem = _read("/proc/meminfo").split()
        if len(mem) > 1:
            info["memory_gib"] = round(int(mem[1]) / 2 ** 20, 1)
        info["nice"] = os.nice(0)
        load = _read("/proc/loadavg").split()
        if len(load) >= 3:
            info["loadavg"] = " ".join(load[:3])
        info["python"] = "%s (%s)" % (platform.python_version(), sys.executable)
        if shutil.which("nvidia-smi"):
            info["nvidia_smi_L"] = _capture(["nvidia-smi", "-L"])
            q = _capture(["nvidia-smi", "--query-gpu=index,name,driver_version,persistence_mode,pci.bus_id",
                          "--format=csv,noheader"])
            info["gpus"] = q
            if q:
                info["driver_version"] = q.splitlines()[0].split(",")[2].strip()
        else:
            info["nvidia_smi_L"] = None
        ver = _read("/proc/driver/nvidia/version").strip()
        if ver:
            info["nvidia_driver_proc"] = ver.splitlines()[0]
        if build:
            info["dmaconn_version"] = _capture([os.path.join(build, "dmaconn"), "--version"])
        git = shutil.which("git")
        if git:
            head = _capture([git, "-C", ROOT, "rev-parse", "--short", "HEAD"])
            dirty = _capture([git, "-C", ROOT, "status", "--porcelain", "--untracked-files=no"])
            if head:
                info["git"] = head + (" (with uncommitted changes)" if dirty else "")
        info["environment"] = {k: v for k, v in os.environ.items()
                               if k.startswith("DMACONN_") or k in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")}
    except Exception as e:  # a missing fact never stops a benchmark
        info["error"] = "%s: %s" % (type(e).__name__, e)
    return info


def draw(spec, path, other_pythons=()):
    """Draws a chart: here with matplotlib, else with another interpreter's
    matplotlib (e.g. the PyTorch venv's), else with the built-in renderer.
    Returns a short description of what drew it."""
    if not chart.have_matplotlib() and not os.environ.get("DMACONN_BENCH_BUILTIN_CHARTS"):
        for py in other_pythons:
            if not py or not os.path.exists(py) or os.path.realpath(py) == os.path.realpath(sys.executable):
                continue
            probe = run_timed([py, "-c", "import matplotlib"], timeout=60)
            if probe["rc"] != 0:
                continue
            fd, spec_path = tempfile.mkstemp(suffix=".json")
            try:
                with os.fdopen(fd, "w") as f:
                    json.dump(spec, f)
                r = run_timed([py, os.path.join(HERE, "chart.py"), spec_path, path], timeout=120)
                if r["rc"] == 0:
                    return "matplotlib (%s)" % py
            finally:
                os.unlink(spec_path)
    return chart.render(spec, path)


def fmt_ms(v):
    if v is None:
        return "—"
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    if v >= 1:
        return "%.2f" % v
    return "%.3f" % v


def md_escape(s):
    return str(s).replace("|", "\\|").replace("\n", " ")
