#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A vLLM-style peer-access check, for comparison with dmaconn's cuda/verified.

vLLM does not trust cudaDeviceCanAccessPeer: gpu_p2p_access_check()
(vllm/distributed/device_communicators/custom_all_reduce_utils.py) proves
each ordered pair (src, tgt) of visible GPUs across two processes.  A
producer allocates 1 KiB on src, sets every byte to 1 and exports it with
cudaIpcGetMemHandle; a consumer, current device tgt, opens the handle (so
that it reaches src's memory from tgt's context: peer access), sets every
byte to 2; both copy the buffer back and the pair passes only if both read 2
everywhere.  Each process resets its device after a pair.  The check runs in
a fresh interpreter (vLLM uses subprocess so that "spawn" works whatever
the caller's __main__), which spawns the two processes; vLLM caches the
answer in a JSON file named after CUDA_VISIBLE_DEVICES only.

This file does the same with PyTorch's processes and the CUDA runtime that
PyTorch loaded (through ctypes, as vLLM's CudaRTLibrary does), in two
modes:

  batched   as vLLM does today: one interpreter, two processes for all
            N*N ordered pairs (the self pairs included);
  per-pair  as vLLM did before it batched (v0.4): for every ordered pair,
            self pairs included as its loop had them, a fresh interpreter
            with two processes.

The time is the caller's, PyTorch already imported (as in a vLLM engine).

Run: python3 bench/vllm_p2p_check.py [--mode batched|per-pair] [--json]
Prints the matrix and the wall time; no cache is read or written.
"""

import argparse
import ctypes
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from itertools import product

BYTES = 1024


class IpcHandle(ctypes.Structure):
    """cudaIpcMemHandle_t: 64 opaque bytes, passed by value."""

    _fields_ = [("reserved", ctypes.c_byte * 64)]


class CudaRuntime:
    """The few cudart calls the check needs, from the libcudart PyTorch loaded."""

    def __init__(self):
        import torch  # noqa: F401  (loads libcudart into the process)

        path = None
        with open("/proc/self/maps") as maps:
            for line in maps:
                if "libcudart" in line:
                    path = line.split()[-1]
                    break
        if path is None:
            raise RuntimeError("PyTorch loaded no libcudart")
        self.lib = ctypes.CDLL(path)

    def call(self, name, *args):
        rc = getattr(self.lib, name)(*args)
        if rc != 0:
            raise RuntimeError("%s failed with cudaError %d" % (name, rc))

    def set_device(self, i):
        self.call("cudaSetDevice", ctypes.c_int(i))

    def malloc(self, n):
        ptr = ctypes.c_void_p()
        self.call("cudaMalloc", ctypes.byref(ptr), ctypes.c_size_t(n))
        return ptr

    def memset(self, ptr, value, n):
        self.call("cudaMemset", ptr, ctypes.c_int(value), ctypes.c_size_t(n))

    def sync(self):
        self.call("cudaDeviceSynchronize")

    def ipc_handle(self, ptr):
        handle = IpcHandle()
        self.call("cudaIpcGetMemHandle", ctypes.byref(handle), ptr)
        return bytes(handle)

    def ipc_open(self, handle):
        ptr = ctypes.c_void_p()
        h = IpcHandle.from_buffer_copy(handle)
        self.lib.cudaIpcOpenMemHandle.argtypes = [ctypes.POINTER(ctypes.c_void_p), IpcHandle, ctypes.c_uint]
        self.call("cudaIpcOpenMemHandle", ctypes.byref(ptr), h, 1)  # cudaIpcMemLazyEnablePeerAccess
        return ptr

    def read_back(self, ptr, n):
        host = (ctypes.c_char * n)()
        self.call("cudaMemcpy", host, ptr, ctypes.c_size_t(n), ctypes.c_int(2))  # DeviceToHost
        return bytes(host)

    def reset(self):
        self.call("cudaDeviceReset")


def producer(pairs, to_consumer, from_consumer, results):
    rt = CudaRuntime()
    for src, _ in pairs:
        rt.set_device(src)
        ptr = rt.malloc(BYTES)
        rt.memset(ptr, 1, BYTES)
        rt.sync()
        to_consumer.put(rt.ipc_handle(ptr))
        ok = from_consumer.get()
        if ok:
            to_consumer.put("written?")  # a barrier made of the two queues
            from_consumer.get()
            ok = rt.read_back(ptr, BYTES) == b"\x02" * BYTES
        results.put(ok)
        rt.reset()


def consumer(pairs, to_consumer, from_consumer, results):
    rt = CudaRuntime()
    for _, tgt in pairs:
        rt.set_device(tgt)
        handle = to_consumer.get()
        try:
            ptr = rt.ipc_open(handle)
            ok = True
        except RuntimeError:
            ok = False  # the producer still waits for an answer
        from_consumer.put(ok)
        if ok:
            rt.memset(ptr, 2, BYTES)
            rt.sync()
            to_consumer.get()
            from_consumer.put("written")
            ok = rt.read_back(ptr, BYTES) == b"\x02" * BYTES
        results.put(ok)
        rt.reset()


def prove(pairs):
    """Both processes' verdicts for the pairs, in order (True only if both agree on True)."""
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    to_consumer, from_consumer, results = ctx.Queue(), ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=f, args=(pairs, to_consumer, from_consumer, results)) for f in (producer, consumer)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    if any(p.exitcode != 0 for p in procs):
        raise RuntimeError("a check process exited with %s" % [p.exitcode for p in procs])
    verdicts = []
    for _ in pairs:
        a, b = results.get(), results.get()
        verdicts.append(bool(a and b))
    return verdicts


def device_count():
    import torch

    return torch.cuda.device_count()


def in_fresh_interpreter(pairs):
    """prove(pairs) in a new interpreter, as vLLM runs it (subprocess, result via a file)."""
    with tempfile.NamedTemporaryFile() as out:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", out.name],
                           input=pickle.dumps(pairs), capture_output=True)
        if p.returncode != 0:
            raise RuntimeError("the check failed:\n" + p.stderr.decode(errors="replace")[-2000:])
        with open(out.name, "rb") as f:
            return pickle.load(f)


def check(mode):
    """(matrix, seconds, self_ok) of the whole check, from the caller's point of view;
    self_ok: whether every self pair (i, i) passed, which a node of one GPU can show."""
    import torch

    start = time.perf_counter()
    n = torch.cuda.device_count()  # without initialising CUDA here
    pairs = list(product(range(n), range(n)))
    if mode == "batched":
        verdicts = in_fresh_interpreter(pairs)
    else:
        verdicts = [in_fresh_interpreter([p])[0] for p in pairs]
    seconds = time.perf_counter() - start
    matrix = [[0] * n for _ in range(n)]
    for (i, j), ok in zip(pairs, verdicts):
        if i != j:
            matrix[i][j] = int(ok)
    return matrix, seconds, all(ok for (i, j), ok in zip(pairs, verdicts) if i == j)


def main(argv):
    if len(argv) == 3 and argv[1] == "--child":
        pairs = pickle.loads(sys.stdin.buffer.read())
        with open(argv[2], "wb") as f:
            pickle.dump(prove(pairs), f)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("batched", "per-pair"), default="batched")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv[1:])
    matrix, seconds, self_ok = check(a.mode)
    if a.json:
        print(json.dumps({"mode": a.mode, "matrix": matrix, "seconds": seconds, "self_pairs_ok": self_ok}))
    else:
        print("vLLM-style check (%s): %d GPUs, %.3f s, self pairs %s" % (a.mode, len(matrix), seconds,
                                                                       "ok" if self_ok else "FAILED"))
        for row in matrix:
            print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
