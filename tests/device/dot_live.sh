#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# On a machine with NVIDIA GPUs: `dmaconn --format dot` from live NVML.
# Draws cuda/nvlink and cuda/p2p, verifies every pair (cuda/verified, which
# caches its verdict in a directory of its own) and draws cuda/nvlink again
# from that verdict, then records the node with its verification and draws
# the recording: the replay must draw the live graph (but for the title's
# "replay of" note).  Checks what the graph must say of a healthy node:
# one node per GPU with its bus id, NVSwitch-attached GPUs meeting at a
# switch node with their link count and GB/s, and nothing red.  Where
# Graphviz's dot is installed each graph is also rendered.  Run from the
# source root; takes well under a minute.  Files in $OUT (default
# /tmp/dmaconn-dot).
set -u
OUT=${OUT:-/tmp/dmaconn-dot}
mkdir -p "$OUT"
B=build-dot

# Jansson: the machine's, or .deb files carried in .deps/.
# shellcheck source=tests/device/jansson.sh
. tests/device/jansson.sh && dc_jansson
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DDMACONN_BUILD_TESTS=OFF -DCMAKE_PREFIX_PATH=$DEPS/usr \
	>"$OUT/cmake.log" 2>&1 && cmake --build $B -j >>"$OUT/cmake.log" 2>&1 ||
	{ echo "build failed"; tail -30 "$OUT/cmake.log"; exit 1; }

export DMACONN_CACHE_DIR=$OUT/cache
rm -rf "$DMACONN_CACHE_DIR"
echo "== machine"
nvidia-smi -L
echo "== dmaconn -d cuda -c nvlink"
$B/dmaconn -d cuda -c nvlink
$B/dmaconn --format dot -d cuda -c nvlink >"$OUT/nvlink.dot"
echo "nvlink.dot: exit $?"
$B/dmaconn --format dot -d cuda -c p2p >"$OUT/p2p.dot"
echo "p2p.dot: exit $?"
echo "== cuda/verified (runs the helper, caches the verdict)"
$B/dmaconn -d cuda -c verified
$B/dmaconn --format dot -d cuda -c nvlink >"$OUT/nvlink-verified.dot"
echo "nvlink-verified.dot: exit $?"
$B/dmaconn --record "$OUT/node.json" --verify
echo "record --verify: exit $?"
$B/dmaconn --replay "$OUT/node.json" --format dot -d cuda -c nvlink >"$OUT/replay.dot"
echo "replay.dot: exit $?"
for f in nvlink p2p nvlink-verified replay; do
	echo "== $f.dot"
	cat "$OUT/$f.dot"
	if command -v dot >/dev/null; then
		dot -Tsvg "$OUT/$f.dot" -o "$OUT/$f.svg" 2>"$OUT/$f.dot.err"
		echo "dot -Tsvg: exit $?, $(wc -c <"$OUT/$f.dot.err") bytes on stderr"
	fi
done

echo "== checks"
python3 - "$OUT" "$B/dmaconn" <<'EOF'
import json, re, subprocess, sys
sys.path.insert(0, "tests")
from harness import Report
out, cli = sys.argv[1], sys.argv[2]
res = json.loads(subprocess.run([cli, "-d", "cuda", "-c", "nvlink", "--json"], capture_output=True,
                                text=True).stdout)["results"][0]
n, devs = len(res["matrix"]), res["devices"]
report = Report()
check = report.check
for name in ("nvlink", "nvlink-verified"):
    text = open("%s/%s.dot" % (out, name)).read()
    check(all(("d%d [label=\"GPU %d\\n" % (i, i)) in text and d["pci_bus_id"] in text
              for i, d in enumerate(devs)), "%s: one node per GPU with its bus id (%d)" % (name, n))
    sw = [d for d in devs if d.get("nvlink_switch_links")]
    edges = re.findall(r'(?:d\d+ -- s\d+|s\d+ -- d\d+) \[label="(\d+) NVLinks?\\n([0-9.]+) GB/s', text)
    check(len(edges) == len(sw) and all(int(k) == d["nvlink_switch_links"] for (k, _), d in zip(edges, sw)),
          "%s: %d switch edges with the switch link counts and GB/s (%s)" % (name, len(sw), edges))
    check("#c62828\", fontcolor" not in text and "penwidth=2];" not in text,
          "%s: nothing red on a healthy node" % name)
live = open(out + "/nvlink-verified.dot").read()
replay = open(out + "/replay.dot").read()
strip = lambda t: re.sub(r" \(replay of [^)]*\)", "", t)
check(strip(replay) == strip(live), "the recording draws the live graph")
sys.exit(report.done())
EOF
