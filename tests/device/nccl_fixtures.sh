#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# On a machine with an NVIDIA GPU and PyTorch's NCCL: NCCL reads the topology
# files dmaconn writes for nodes with RDMA NICs and NVLink-C2C, which this
# machine does not have, from the placement fixtures' replays.  For each,
# `dmaconn --replay F --format nccl-xml`, then a one-process all-reduce with
# NCCL_TOPO_FILE pointing at it under NCCL_DEBUG=INFO: NCCL must say it
# loaded the file, warn about nothing, and sum right; its fused topology
# (NCCL_TOPO_DUMP_FILE) is kept.  NCCL keeps only the GPUs and NICs it finds
# here, so this proves NCCL parses the <nic>/<net> and <c2c> elements and the
# PCIe nesting, not what it would do with them on that hardware.  A control
# with a broken <nic> element must make NCCL refuse the file.
# Run from the source root; logs in $OUT (default /tmp/dmaconn-nccl-fixtures).
set -u
B=build-nccl
# shellcheck source=tests/device/jansson.sh
. tests/device/jansson.sh && dc_setup nccl-fixtures
dc_build $B -DDMACONN_BUILD_TESTS=OFF -- --target dmaconn_cli
python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'

status=0
# load LABEL FILE: the all-reduce with NCCL_TOPO_FILE=FILE; 0 when NCCL loaded it without a warning.
load() {
	local label=$1 xml=$2
	env NCCL_TOPO_FILE="$xml" NCCL_TOPO_DUMP_FILE="$OUT/$label-dump.xml" NCCL_DEBUG=INFO \
		NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH timeout 120 python3 tests/device/nccl_allreduce.py 1 >"$OUT/$label.log" 2>&1
	local rc=$?
	local warns
	warns=$(grep -c "NCCL WARN" "$OUT/$label.log")
	echo "-- $label: exit $rc, $warns NCCL warnings"
	grep -E "Loading topology file|NCCL WARN|^rank [0-9]+: all_reduce" "$OUT/$label.log" | head -8
	[ $rc -eq 0 ] && [ "$warns" -eq 0 ] && grep -q "Loading topology file $xml" "$OUT/$label.log"
}

for f in dgx-h100-8nic gb200-tray gb10 gh200-cdmm acs-redirect; do
	xml=$OUT/$f.xml
	DMACONN_QUIET=1 $B/dmaconn --replay "tests/topologies-placement/$f.json" --format nccl-xml >"$xml" ||
		{ echo "FAIL $f: dmaconn exited $?"; status=1; continue; }
	echo "== $f: $(grep -c '<net ' "$xml") nets, $(grep -c '<c2c ' "$xml") c2c elements, $(grep -c '<gpu ' "$xml") GPUs"
	if load "$f" "$xml"; then echo "ok $f: NCCL loaded it"; else echo "FAIL $f"; status=1; fi
done

echo "== this node: the <cpu> attributes dmaconn writes against those NCCL fills from the live CPU"
$B/dmaconn --format nccl-xml >"$OUT/live.xml" && cat /sys/devices/system/cpu/modalias | cut -c1-60
if load live "$OUT/live.xml"; then
	ours=$(grep -o '<cpu [^>]*>' "$OUT/live.xml" | grep -o ' \(arch\|vendor\|familyid\|modelid\)="[^"]*"' | sort -u | tr -d '\n')
	nccl=$(grep -o '<cpu [^>]*>' "$OUT/live-dump.xml" | grep -o ' \(arch\|vendor\|familyid\|modelid\)="[^"]*"' | sort -u | tr -d '\n')
	echo "dmaconn:$ours"; echo "NCCL:   $nccl"
	if [ -n "$ours" ] && [ "$ours" = "$nccl" ]; then echo "ok live: the same CPU"; else echo "FAIL live: they differ"; status=1; fi
else
	echo "FAIL live"; status=1
fi

echo "== control: the first </nic> misspelt </nix> must make NCCL refuse the file"
sed '0,/<\/nic>/s//<\/nix>/' "$OUT/dgx-h100-8nic.xml" >"$OUT/control.xml"
if load control "$OUT/control.xml"; then
	echo "FAIL: NCCL accepted a broken <nic> element, so the runs above prove nothing"; status=1
else
	echo "ok: NCCL refused it, so it parses the <nic> elements it is given"
fi
echo "nccl_fixtures: $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
