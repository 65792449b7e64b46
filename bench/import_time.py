#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What `import dmaconn` costs: medians over fresh interpreters.

    python3 bench/import_time.py [--runs N] [--python PY] [--check MS] [--json FILE]

Per run, one fresh process each of:
  - `python -X importtime -c "import dmaconn"`: the cumulative import time
    Python reports for the package (interpreter start-up excluded);
  - `python -c "import dmaconn"` against `python -c "pass"`: wall time, and
    the difference of their medians;
  - `python -c "import dmaconn; dmaconn.detect"`: the package plus the
    binding's first use (ctypes, the library loaded), for comparison.
The package is the one Python finds (PYTHONPATH, or an installed wheel); by
default python/ of this checkout.  --check MS exits 1 when the median
import time exceeds MS milliseconds.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def wall(cmd, env):
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000.0


def importtime(python, env, code="import dmaconn"):
    """The cumulative microseconds -X importtime reports for dmaconn."""
    out = subprocess.run([python, "-X", "importtime", "-c", code], env=env, check=True,
                         capture_output=True, text=True).stderr
    for line in out.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| dmaconn$", line)
        if m:
            return int(m.group(1)) / 1000.0
    raise RuntimeError("no import time reported for dmaconn:\n" + out)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=31)
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--check", type=float, metavar="MS")
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args(argv)

    env = dict(os.environ)
    env.setdefault("PYTHONPATH", os.path.join(ROOT, "python"))
    env["PYTHONDONTWRITEBYTECODE"] = "0"
    py = args.python
    # Warm-up: byte-code written, files in the page cache.
    for _ in range(3):
        importtime(py, env)
        wall([py, "-c", "import dmaconn; dmaconn.detect"], env)

    own, bare, imported, used = [], [], [], []
    for _ in range(args.runs):
        own.append(importtime(py, env))
        bare.append(wall([py, "-c", "pass"], env))
        imported.append(wall([py, "-c", "import dmaconn"], env))
        used.append(wall([py, "-c", "import dmaconn; dmaconn.detect"], env))

    med = statistics.median
    result = {
        "python": subprocess.run([py, "-c", "import sys; print(sys.version.split()[0])"],
                                 capture_output=True, text=True, env=env).stdout.strip(),
        "runs": args.runs,
        "import_ms_median": round(med(own), 3),
        "import_ms_max": round(max(own), 3),
        "wall_pass_ms_median": round(med(bare), 2),
        "wall_import_ms_median": round(med(imported), 2),
        "wall_import_minus_pass_ms": round(med(imported) - med(bare), 2),
        "wall_first_use_ms_median": round(med(used), 2),
    }
    print(f"Python {result['python']}, {args.runs} fresh processes each (medians)")
    print(f"  import dmaconn (-X importtime, cumulative): {result['import_ms_median']:.3f} ms"
          f" (max {result['import_ms_max']:.3f})")
    print(f"  wall: python -c pass {result['wall_pass_ms_median']:.1f} ms,"
          f" import dmaconn {result['wall_import_ms_median']:.1f} ms"
          f" (+{result['wall_import_minus_pass_ms']:.1f}),"
          f" import + first use {result['wall_first_use_ms_median']:.1f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    if args.check is not None and result["import_ms_median"] > args.check:
        print(f"FAIL: import dmaconn takes {result['import_ms_median']} ms, over {args.check} ms")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
