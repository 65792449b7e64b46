#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs "$@" as one rank of a simulated multi-node job: rank R gets
# DMACONN_REPLAY from DMACONN_TEST_REPLAY_<R> and CUDA_VISIBLE_DEVICES from
# DMACONN_TEST_CVD_<R>, where set.  The rank comes from Open MPI, MPICH or
# PMIx.
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-}}}
case $rank in
'' | *[!0-9]*)
	echo "rank.sh: no MPI rank in the environment" >&2
	exit 2
	;;
esac
eval "replay=\${DMACONN_TEST_REPLAY_$rank-}"
eval "cvd=\${DMACONN_TEST_CVD_$rank-}"
if [ -n "$replay" ]; then
	DMACONN_REPLAY=$replay
	export DMACONN_REPLAY
fi
if [ -n "$cvd" ]; then
	CUDA_VISIBLE_DEVICES=$cvd
	export CUDA_VISIBLE_DEVICES
fi
exec "$@"
