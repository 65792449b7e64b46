#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""An all-reduce over NCCL through PyTorch, one process per GPU.

usage: nccl_allreduce.py WORLD_SIZE

Each rank r contributes a tensor of r + 1 on its own GPU; after a summing
all_reduce every element must equal WORLD_SIZE * (WORLD_SIZE + 1) / 2.
With WORLD_SIZE 1 the communicator has one process.  NCCL's environment
(NCCL_TOPO_FILE, NCCL_DEBUG, ...) is the caller's.  Prints one line per
rank: "rank R: all_reduce sum S, expected E: ok|WRONG"; exits 0 when every
rank got the sum.
"""
import os
import socket
import sys


def rank_main(rank, world, port, results):
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world,
                            device_id=torch.device("cuda", rank))
    x = torch.full((1 << 20,), float(rank + 1), device="cuda")
    dist.all_reduce(x, op=dist.ReduceOp.SUM)
    torch.cuda.synchronize()
    want = world * (world + 1) / 2
    got = x.min().item(), x.max().item()
    results[rank] = (got[0] == want and got[1] == want, got[0], want)
    dist.barrier()
    dist.destroy_process_group()


def main():
    world = int(sys.argv[1])
    import torch
    import torch.multiprocessing as mp
    if torch.cuda.device_count() < world:
        print("needs %d GPUs, has %d" % (world, torch.cuda.device_count()))
        return 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    results = mp.Manager().dict()
    mp.spawn(rank_main, args=(world, port, results), nprocs=world, join=True)
    ok = True
    for r in range(world):
        good, got, want = results.get(r, (False, None, world * (world + 1) / 2))
        print("rank %d: all_reduce sum %s, expected %s: %s" % (r, got, want, "ok" if good else "WRONG"))
        ok &= good
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
