#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Time and peak memory of detection against the device count, on replays.

For each N, writes a synthetic replay of N NVSwitch-attached GPUs
(bench/gen_topologies.py; --p2p adds the per-pair P2P answers, without them
every pair warns) and runs the CLI on it:

    dmaconn --replay nvswitch-N.json -d cuda -c CONNECTION --json

once per connection (nvlink, p2p), measuring wall time and the child's peak
resident memory (wait4's ru_maxrss: parsing the file, detecting, printing),
the JSON's size, the warnings printed on stderr and those in the JSON, and
the replay file's size.  Prints a table and writes replay_scale.json into
--out.  No GPU needed; no timing is asserted.

    python3 bench/replay_scale.py [--build build] [--out DIR] [--p2p] [--connections nvlink,p2p]
                                  [N ...]          (default N: 8 16 32 64 128 256 512 1024)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_topologies  # noqa: E402

DEFAULT_COUNTS = (8, 16, 32, 64, 128, 256, 512, 1024)


def run_once(cli, replay, connection, timeout):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DMACONN_")}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        p = subprocess.Popen([cli, "--replay", replay, "-d", "cuda", "-c", connection, "--json"],
                             stdout=out, stderr=err, env=env)
        try:
            _, status, usage = os.wait4(p.pid, 0)
        except KeyboardInterrupt:
            p.kill()
            raise
        seconds = time.perf_counter() - start
        p.returncode = os.waitstatus_to_exitcode(status)
        out_size = out.tell()
        out.seek(0)
        err.seek(0)
        printed = sum(1 for line in err if line.startswith(b"dmaconn: warning: "))
        warnings = None
        if p.returncode == 0:
            try:
                warnings = sum(len(r["warnings"]) for r in json.load(out)["results"])
            except (ValueError, KeyError, TypeError):
                warnings = None
    return {"exit": p.returncode, "seconds": round(seconds, 4), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "json_bytes": out_size, "warnings_printed": printed, "warnings_in_json": warnings}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("counts", nargs="*", type=int, default=list(DEFAULT_COUNTS))
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=None, help="directory for replay_scale.json (default: print only)")
    ap.add_argument("--p2p", action="store_true", help="replays with per-pair P2P answers")
    ap.add_argument("--connections", default="nvlink,p2p")
    ap.add_argument("--timeout", type=float, default=1800)
    args = ap.parse_args(argv[1:])
    cli = os.path.join(os.path.abspath(args.build), "dmaconn")
    rows = []
    with tempfile.TemporaryDirectory(prefix="dmaconn-scale-") as tmp:
        print("%6s %-7s %9s %10s %12s %9s %8s %10s" % ("N", "conn", "time s", "peak MB", "JSON bytes",
                                                      "printed", "in JSON", "file bytes"))
        for n in args.counts:
            replay = os.path.join(tmp, "nvswitch-%d.json" % n)
            with open(replay, "w") as f:
                json.dump(gen_topologies.topology(n, p2p=args.p2p), f)
            size = os.path.getsize(replay)
            for conn in args.connections.split(","):
                r = dict(run_once(cli, replay, conn, args.timeout), n=n, connection=conn, file_bytes=size,
                         p2p_section=args.p2p)
                rows.append(r)
                print("%6d %-7s %9.3f %10.1f %12d %9d %8s %10d%s" % (
                    n, conn, r["seconds"], r["peak_rss_mb"], r["json_bytes"], r["warnings_printed"],
                    r["warnings_in_json"], size, "" if r["exit"] == 0 else "  (exit %d)" % r["exit"]))
                sys.stdout.flush()
            os.unlink(replay)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "replay_scale.json"), "w") as f:
            json.dump({"cli": cli, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
