#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""On a GPU machine: every built-in detector but cuda/verified (whose GPU work
runs in the helper process) leaves CUDA uninitialised in the calling process.

NVML (driver 580 and later) dlopens libcuda.so.1 inside nvmlInit, so the
library being mapped proves nothing either way.  What does: after the
detections, cuDeviceGetCount answers CUDA_ERROR_NOT_INITIALIZED (3) in this
very process as long as nobody has called cuInit; after our own cuInit it
must answer 0 (the control).  /dev/nvidia-uvm is shown but proves nothing:
NVML 580 opens it too.

usage: tests/device/cuda_untouched.py path/to/libdmaconn.so.0
"""
import ctypes
import os
import sys


def uvm_open():
    fds = os.listdir("/proc/self/fd")
    return any(os.path.realpath("/proc/self/fd/" + f) == "/dev/nvidia-uvm" for f in fds)


def libcuda_mapped():
    with open("/proc/self/maps") as f:
        return any("libcuda.so" in line for line in f)


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.dmaconn_detect.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.dmaconn_device_type_parse.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
    lib.dmaconn_result_size.argtypes = [ctypes.c_void_p]
    lib.dmaconn_result_release.argtypes = [ctypes.c_void_p]
    pairs = [p.split("/") for p in sys.argv[2:]] or [["cuda", "nvlink"], ["cuda", "p2p"], ["cuda", "multicast"]]
    for dev, conn in pairs:
        out = ctypes.c_void_p()
        t = ctypes.c_int(0)
        lib.dmaconn_device_type_parse(dev.encode(), ctypes.byref(t))
        rc = lib.dmaconn_detect(t.value, conn.encode(), ctypes.byref(out))
        n = lib.dmaconn_result_size(out) if rc == 0 else -1
        print("detect %s/%s: rc %d, %d devices" % (dev, conn, rc, n))
        if rc == 0:
            lib.dmaconn_result_release(out)
    print("libcuda.so mapped (by NVML, not dmaconn): %s" % libcuda_mapped())
    cuda = ctypes.CDLL("libcuda.so.1")
    count = ctypes.c_int(-1)
    before = cuda.cuDeviceGetCount(ctypes.byref(count))
    uvm_before = uvm_open()
    print("after dmaconn: cuDeviceGetCount -> %d (3 = CUDA_ERROR_NOT_INITIALIZED); /dev/nvidia-uvm open: %s"
          % (before, uvm_before))
    init = cuda.cuInit(0)
    after = cuda.cuDeviceGetCount(ctypes.byref(count))
    print("control, after our cuInit (-> %d): cuDeviceGetCount -> %d, %d devices; /dev/nvidia-uvm open: %s"
          % (init, after, count.value, uvm_open()))
    untouched = before == 3
    print("CUDA untouched by dmaconn: %s" % ("yes" if untouched else "NO"))
    return 0 if untouched and after == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
