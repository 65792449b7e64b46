#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# On a machine with NVIDIA GPUs and PyTorch: writes this node's NCCL
# topology file with `dmaconn --format nccl-xml`, then runs an all-reduce
# through PyTorch's NCCL with NCCL_TOPO_FILE pointing at it: one process
# on GPU 0, and two processes where there are two GPUs.  Shows the
# NCCL_DEBUG=INFO lines that say NCCL loaded the file (NCCL's
# src/graph/topo.cc "NCCL_TOPO_FILE set by environment to", xml.cc
# "Loading topology file" and "Loading topology dmaconn", the file's
# name), and checks the sum.  As a control, a copy of the file with another
# version must make NCCL refuse it ("XML Topology has wrong version"), which
# shows that NCCL parses what it was given.  Run from the source root;
# takes about a minute.  Logs in $OUT (default /tmp/dmaconn-nccl).
set -u
B=build-nccl

# Jansson: the machine's, or .deb files carried in .deps/.
# shellcheck source=tests/device/jansson.sh
. tests/device/jansson.sh && dc_setup nccl
dc_build $B -DDMACONN_BUILD_TESTS=OFF -- --target dmaconn_cli

echo "== machine"
nvidia-smi -L
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
ngpu=$(nvidia-smi -L | grep -c '^GPU ')

echo "== dmaconn on this node"
$B/dmaconn -d cuda -c nvlink
$B/dmaconn --format nccl-xml >"$OUT/topo.xml"
echo "dmaconn --format nccl-xml: exit $?"
cat "$OUT/topo.xml"

# run LABEL WORLD TOPO_FILE [VAR=value...]: the all-reduce under NCCL_DEBUG=INFO, its log in $OUT/LABEL.log.
run() {
	local label=$1 world=$2 topo=$3
	shift 3
	env NCCL_TOPO_FILE="$topo" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH "$@" \
		timeout 120 python3 tests/device/nccl_allreduce.py "$world" >"$OUT/$label.log" 2>&1
	local rc=$?
	echo "-- $label: $world process(es), NCCL_TOPO_FILE=$topo: exit $rc"
	grep -E "NCCL_TOPO_FILE set by environment|Loading topology|Could not open XML topology|XML Topology has wrong|WARN" "$OUT/$label.log"
	grep -E "^rank [0-9]+: all_reduce" "$OUT/$label.log"
	[ $rc -ne 0 ] && [ "$label" != control ] && tail -40 "$OUT/$label.log"
	return $rc
}

status=0
echo "== one process"
run one 1 "$OUT/topo.xml" NCCL_TOPO_DUMP_FILE="$OUT/one-dump.xml" || status=1
grep -q "Loading topology file $OUT/topo.xml" "$OUT/one.log" && grep -q "Loading topology dmaconn" "$OUT/one.log" ||
	{ echo "FAIL: NCCL did not say it loaded $OUT/topo.xml"; status=1; }
[ -f "$OUT/one-dump.xml" ] && { echo "NCCL's topology after fusing the file ($OUT/one-dump.xml):"; cat "$OUT/one-dump.xml"; }
if [ "$ngpu" -ge 2 ]; then
	echo "== two processes"
	run two 2 "$OUT/topo.xml" || status=1
	# One line per rank (no dump here, which would load the file twice).
	[ "$(grep -c "Loading topology file $OUT/topo.xml" "$OUT/two.log")" -ge 2 ] ||
		{ echo "FAIL: not every rank loaded the file"; status=1; }
else
	echo "== two processes: skipped, $ngpu GPU"
fi
echo "== control: the same file with version=\"2\" must be refused"
sed 's/<system version="1"/<system version="2"/' "$OUT/topo.xml" >"$OUT/topo-v2.xml"
if run control 1 "$OUT/topo-v2.xml"; then
	echo "FAIL: NCCL accepted a version 2 file"; status=1
elif grep -q "XML Topology has wrong version 2" "$OUT/control.log"; then
	echo "ok: NCCL refused it, so it parses the file it is given"
else
	echo "FAIL: the control failed for another reason"; tail -20 "$OUT/control.log"; status=1
fi
echo "nccl_topo: $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
