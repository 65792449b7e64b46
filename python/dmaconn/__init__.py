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
first use (PEP 562), so ``import dmaconn`` stays cheap.  fork() waits for a
first use in progress in another thread (see _fork_prepare).
"""

import os

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
    **dict.fromkeys(("detect_node", "global_matrix", "host_id", "host_imex", "rank_record"), "._multinode"),
    **dict.fromkeys(("DevicePlacement", "Nic", "NicLink", "Placement", "placement"), "._placement"),
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


# fork() while another thread is inside its first call (importing a submodule,
# loading the library) would leave that import lock or the library's load lock
# held in the child, which has only the forking thread: the child's first
# call would wait forever.  So fork() first finishes those imports (an import
# in progress elsewhere is waited for) and takes the package's locks; both
# processes release them afterwards.  Cheap after the first fork; nothing at
# import time.
_fork_held = []


def _fork_prepare():
    from importlib import import_module

    for module in sorted(set(_LAZY.values())):
        import_module(module, __name__)
    from . import _core, _library

    for lock in (_library._lock, _core._registry_lock):
        lock.acquire()
        _fork_held.append(lock)


def _fork_release():
    while _fork_held:
        _fork_held.pop().release()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_fork_prepare, after_in_parent=_fork_release, after_in_child=_fork_release
    )
