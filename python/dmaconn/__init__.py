# SPDX-License-Identifier: BSD-3-Clause
"""Python binding of libdmaconn: DMA connectivity between accelerators.

>>> import dmaconn
>>> r = dmaconn.detect("cuda", "nvlink")
>>> r.matrix            # [[0, 18], [18, 0]]: NVLink links from GPU i to GPU j
>>> r.devices[0]["name"], r.warnings

The shared library libdmaconn.so.0 is loaded on first use, from
DMACONN_LIBRARY (an absolute path) when set, else from the wheel's own lib
directory, beside this package, an installation prefix's lib directory, a
checkout's build directory, or the system loader.  It never initialises CUDA.

Importing the package loads nothing else: each name below is imported on
first use (PEP 562), so ``import dmaconn`` stays cheap.
"""

__version__ = "0.1.0"

# name -> submodule that defines it
_LAZY = {
    **dict.fromkeys(
        (
            "DMAConnectivity",
            "VerifyResult",
            "clear_cache",
            "detect",
            "detect_dma_connectivity",
            "device_type_name",
            "library_path",
            "list_detectors",
            "register_detector",
            "shutdown",
            "strerror",
            "unregister_detector",
            "verify",
            "version",
        ),
        "._core",
    ),
    **dict.fromkeys(
        (
            "BusyError",
            "DetectorError",
            "DetectorExistsError",
            "DmaconnWarning",
            "Error",
            "InvalidArgumentError",
            "LibraryNotFoundError",
            "NoDetectorError",
            "OutOfMemoryError",
            "RangeError",
            "ReplayError",
            "UnavailableError",
        ),
        "._errors",
    ),
    **dict.fromkeys(("detect_node", "global_matrix", "host_id", "rank_record"), "._multinode"),
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
