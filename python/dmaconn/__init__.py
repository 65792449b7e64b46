"""Python binding of libdmaconn: DMA connectivity between accelerators.

>>> import dmaconn
>>> r = dmaconn.detect("cuda", "nvlink")
>>> r.matrix            # [[0, 18], [18, 0]]: NVLink links from GPU i to GPU j
>>> r.devices[0]["name"], r.warnings

The shared library libdmaconn.so.0 is loaded on first use, from
DMACONN_LIBRARY (an absolute path) when set, else from beside this package,
an installation prefix's lib directory, a checkout's build directory, or the
system loader.  It never initialises CUDA.
"""

from ._core import (
    DMAConnectivity,
    VerifyResult,
    clear_cache,
    detect,
    detect_dma_connectivity,
    device_type_name,
    library_path,
    list_detectors,
    register_detector,
    shutdown,
    strerror,
    unregister_detector,
    verify,
    version,
)
from ._errors import (
    BusyError,
    DetectorError,
    DetectorExistsError,
    DmaconnWarning,
    Error,
    InvalidArgumentError,
    LibraryNotFoundError,
    NoDetectorError,
    OutOfMemoryError,
    RangeError,
    ReplayError,
    UnavailableError,
)
from ._multinode import detect_node, global_matrix, host_id, rank_record

__version__ = "0.1.0"

__all__ = [
    "BusyError",
    "DMAConnectivity",
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
    "VerifyResult",
    "clear_cache",
    "detect",
    "detect_dma_connectivity",
    "detect_node",
    "device_type_name",
    "global_matrix",
    "host_id",
    "library_path",
    "list_detectors",
    "rank_record",
    "register_detector",
    "shutdown",
    "strerror",
    "unregister_detector",
    "verify",
    "version",
]
