# SPDX-License-Identifier: BSD-3-Clause
"""Finding, loading and declaring the shared library libdmaconn.so.0."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from pathlib import Path
from typing import Callable, List, Optional

from ._errors import LibraryNotFoundError

SONAME = "libdmaconn.so.0"
ENV_LIBRARY = "DMACONN_LIBRARY"

c_int_p = ctypes.POINTER(ctypes.c_int)

DETECTOR_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
WARNING_FN = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_void_p)


def _pair_accessors(prefix: str) -> dict:
    """A result's pair-property accessors (the object, then i, j)."""
    obj, i = ctypes.c_void_p, ctypes.c_int
    return {
        f"{prefix}_pair_property_count": (ctypes.c_int, [obj, i, i]),
        f"{prefix}_pair_property_key": (ctypes.c_char_p, [obj, i, i, i]),
        f"{prefix}_pair_property_value": (ctypes.c_char_p, [obj, i, i, i]),
        f"{prefix}_pair_get": (ctypes.c_char_p, [obj, i, i, ctypes.c_char_p]),
    }


def _warning_accessors(prefix: str) -> dict:
    """A result's warning accessors."""
    return {
        f"{prefix}_warning_count": (ctypes.c_int, [ctypes.c_void_p]),
        f"{prefix}_warning": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    }


# name: (restype, argtypes); pointers to results and builders are c_void_p.
_PROTOTYPES = {
    "dmaconn_version_string": (ctypes.c_char_p, []),
    "dmaconn_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "dmaconn_last_error": (ctypes.c_char_p, []),
    "dmaconn_device_type_name": (ctypes.c_char_p, [ctypes.c_int]),
    "dmaconn_device_type_parse": (ctypes.c_int, [ctypes.c_char_p, c_int_p]),
    "dmaconn_connection_text": (ctypes.c_char_p, [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]),
    "dmaconn_detect": (ctypes.c_int, [ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    "dmaconn_detect_fresh": (
        ctypes.c_int,
        [ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)],
    ),
    "dmaconn_clear_cache": (None, []),
    "dmaconn_result_retain": (ctypes.c_void_p, [ctypes.c_void_p]),
    "dmaconn_result_release": (None, [ctypes.c_void_p]),
    "dmaconn_result_device_type": (ctypes.c_int, [ctypes.c_void_p]),
    "dmaconn_result_connection_type": (ctypes.c_char_p, [ctypes.c_void_p]),
    "dmaconn_result_size": (ctypes.c_int, [ctypes.c_void_p]),
    "dmaconn_result_matrix": (c_int_p, [ctypes.c_void_p]),
    "dmaconn_result_get": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]),
    **_warning_accessors("dmaconn_result"),
    "dmaconn_result_device_property_count": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    "dmaconn_result_device_property_key": (
        ctypes.c_char_p,
        [ctypes.c_void_p, ctypes.c_int, ctypes.c_int],
    ),
    "dmaconn_result_device_property_value": (
        ctypes.c_char_p,
        [ctypes.c_void_p, ctypes.c_int, ctypes.c_int],
    ),
    "dmaconn_result_device_get": (
        ctypes.c_char_p,
        [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p],
    ),
    **_pair_accessors("dmaconn_result"),
    "dmaconn_result_pair_lists": (
        ctypes.c_int,
        [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint), ctypes.c_size_t],
    ),
    "dmaconn_builder_set_size": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    "dmaconn_builder_set": (
        ctypes.c_int,
        [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int],
    ),
    "dmaconn_builder_set_device_property": (
        ctypes.c_int,
        [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p],
    ),
    "dmaconn_builder_set_pair_property": (
        ctypes.c_int,
        [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p],
    ),
    # Variadic: always called as (b, b"%s", message).
    "dmaconn_builder_warn": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]),
    "dmaconn_register_detector": (
        ctypes.c_int,
        [ctypes.c_int, ctypes.c_char_p, DETECTOR_FN, ctypes.c_void_p],
    ),
    "dmaconn_unregister_detector": (ctypes.c_int, [ctypes.c_int, ctypes.c_char_p]),
    "dmaconn_list_detectors": (
        ctypes.c_int,
        [c_int_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int],
    ),
    "dmaconn_set_warning_handler": (None, [WARNING_FN, ctypes.c_void_p]),
    "dmaconn_shutdown": (None, []),
    # The property table (include/dmaconn_props.h) and its value readers.
    "dmaconn_property_count": (ctypes.c_int, []),
    "dmaconn_property_key": (ctypes.c_char_p, [ctypes.c_int]),
    "dmaconn_property_type_of": (ctypes.c_int, [ctypes.c_char_p]),
    "dmaconn_property_json_type": (ctypes.c_char_p, [ctypes.c_int]),
    "dmaconn_placement_key_count": (ctypes.c_int, []),
    "dmaconn_placement_key": (ctypes.c_char_p, [ctypes.c_int]),
    "dmaconn_property_read_int": (
        ctypes.c_int,
        [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_longlong)],
    ),
    "dmaconn_property_read_number": (
        ctypes.c_int,
        [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_double)],
    ),
    "dmaconn_property_read_bool": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, c_int_p]),
}

# The functional check, which a library may be built without: its result is
# a dmaconn_result, read with the accessors above.
_OPTIONAL_PROTOTYPES = {
    "dmaconn_verify_run": (
        ctypes.c_int,
        [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)],
    ),
}


def _package_dir() -> Path:
    return Path(__file__).resolve().parent


def candidates() -> List[str]:
    """Where the library is looked for, in order (DMACONN_LIBRARY aside)."""
    pkg = _package_dir()
    # A wheel (dmaconn/lib), then beside the package.
    found: List[str] = [str(pkg / "lib" / SONAME), str(pkg / SONAME)]
    # An installation prefix: <prefix>/lib[64]/pythonX.Y/site-packages/dmaconn.
    for parent in pkg.parents:
        if parent.name in ("lib", "lib64"):
            found.append(str(parent / SONAME))
            break
    # A checkout: python/dmaconn -> <repo>/build.
    found.append(str(pkg.parent.parent / "build" / SONAME))
    return found


def _load() -> ctypes.CDLL:
    override = os.environ.get(ENV_LIBRARY)
    if override:
        if not os.path.isabs(override):
            raise LibraryNotFoundError(
                f"{ENV_LIBRARY} must be an absolute path to {SONAME}, not {override!r}"
            )
        try:
            return ctypes.CDLL(override)
        except OSError as exc:
            raise LibraryNotFoundError(
                f"cannot load {override} (from {ENV_LIBRARY}): {exc}"
            ) from None

    tried: List[str] = []
    unloadable: List[str] = []  # found, but the loader refused it (a dependency missing, ...)
    for path in candidates():
        if not os.path.exists(path):
            tried.append(f"{path} (absent)")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as exc:
            tried.append(f"{path} ({exc})")
            unloadable.append(f"{path} cannot be loaded: {exc}")

    names = [SONAME]
    found = ctypes.util.find_library("dmaconn")
    if found and found not in names:
        names.append(found)
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError as exc:
            tried.append(f"{name} through the system loader ({exc})")
    if unloadable:  # what is missing is what the loader named, not the library
        raise LibraryNotFoundError(
            f"the dmaconn shared library {unloadable[0]}. Tried:\n  " + "\n  ".join(tried)
        )
    raise LibraryNotFoundError(
        f"cannot find the dmaconn shared library {SONAME}; set {ENV_LIBRARY} to its "
        "absolute path or install it where the system loader finds it. Tried:\n  "
        + "\n  ".join(tried)
    )


def _declare(lib: ctypes.CDLL) -> bool:
    """Declares the prototypes; whether the optional functional check is there."""
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise LibraryNotFoundError(
                f"{lib._name} is not a compatible dmaconn library: it lacks {name}"
            ) from None
        fn.restype = restype
        fn.argtypes = argtypes
    if not all(hasattr(lib, name) for name in _OPTIONAL_PROTOTYPES):
        return False
    for name, (restype, argtypes) in _OPTIONAL_PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return True


_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
has_verify = False  # whether the loaded library has dmaconn_verify_run()
_on_load: List[Callable[[ctypes.CDLL], None]] = []  # run once, right after loading


def get() -> ctypes.CDLL:
    """The loaded library (loaded and declared on first use)."""
    global _lib, has_verify
    lib = _lib
    if lib is not None:
        return lib
    with _lock:
        if _lib is None:
            lib = _load()
            has_verify = _declare(lib)
            for hook in _on_load:
                hook(lib)
            _lib = lib
        return _lib


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def path() -> str:
    """The file the loaded library came from, as the dynamic loader found it."""
    lib = get()
    try:
        dladdr = ctypes.CDLL(None).dladdr
        dladdr.restype = ctypes.c_int
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        info = _DlInfo()
        address = ctypes.cast(lib.dmaconn_version_string, ctypes.c_void_p)
        if dladdr(address, ctypes.byref(info)) and info.dli_fname:
            return os.fsdecode(info.dli_fname)
    except (AttributeError, OSError):
        pass
    return str(lib._name)
