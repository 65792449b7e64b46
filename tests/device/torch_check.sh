#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# On a machine with PyTorch and NVIDIA GPUs: builds dmaconn, shows what
# PyTorch's c10d registry answers once dmaconn.torch has registered
# (tests/device/torch_check.py), runs dmaconn.torch's tests (not skipped
# where PyTorch is importable), then the whole suite.  Logs go to
# $OUT (default /tmp/dmaconn-torch).  Run from the source root.
set -u
B=build-torch

# Jansson for the replay component: the machine's, or .deb files carried in .deps/.
# shellcheck source=tests/device/jansson.sh
. tests/device/jansson.sh && dc_setup torch
dc_build $B
ls $B/libdmaconn_replay.so.0 >/dev/null || { echo "no replay component"; exit 1; }

echo "== machine"
nvidia-smi -L
python3 -c 'import torch, sys; print(sys.executable, "torch", torch.__version__, "cuda", torch.version.cuda)'
grep Python3_EXECUTABLE $B/CMakeCache.txt
c++ --version | head -1

echo "== c10d's registry with dmaconn.torch"
DMACONN_TORCH_CACHE=/tmp/dmaconn-torch-check-cache DMACONN_LIBRARY=$PWD/$B/libdmaconn.so.0 PYTHONPATH=$PWD/python python3 tests/device/torch_check.py 2>&1 |
	tee "$OUT/torch_check.log"
rc=${PIPESTATUS[0]}

echo "== dmaconn.torch's tests (test_torch_live reuses the shim built above)"
(cd python/tests && DMACONN_LIBRARY=$PWD/../../$B/libdmaconn.so.0 DMACONN_BUILD_DIR=$PWD/../../$B \
	DMACONN_TORCH_CACHE=/tmp/dmaconn-torch-check-cache PYTHONPATH=$PWD/.. \
	python3 -m unittest -v test_torch test_torch_live) >"$OUT/unittest.log" 2>&1
urc=$?
grep -E " \.\.\. |^Ran |^OK|^FAILED" "$OUT/unittest.log"
[ $urc -ne 0 ] && tail -80 "$OUT/unittest.log"

echo "== the whole suite (ctest; its python test runs test_torch*.py too)"
(cd $B && timeout 300 ctest -j16 --output-on-failure) >"$OUT/ctest.log" 2>&1
crc=$?
grep -E "tests passed|Total Test time|\*\*\*|Failed  |Not Run" "$OUT/ctest.log" | tail -30
[ $crc -ne 0 ] && tail -80 "$OUT/ctest.log"
echo "torch_check rc=$rc unittest rc=$urc ctest rc=$crc"
exit $(( rc || urc || crc ))
