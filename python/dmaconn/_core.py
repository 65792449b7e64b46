# SPDX-License-Identifier: BSD-3-Clause
"""Detection, results, Python detectors and warnings over the C API."""

from __future__ import annotations

import array
import atexit
import ctypes
import itertools
import numbers
import operator
import os
import threading
import warnings
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _errors, _library
from ._errors import DetectorError, DmaconnWarning, Error
from ._json import typed_value

Matrix = List[List[int]]

_INT_MAX = 2**31 - 1
# Device type names PyTorch uses that dmaconn spells differently.
_ALIASES = {"hip": "rocm"}


def _decode(raw: Optional[bytes]) -> str:
    return os.fsdecode(raw) if raw is not None else ""


def _encode(text: str) -> bytes:
    # C sees a NUL as the end of the string: "nvlink\0x" must not mean "nvlink".
    if "\0" in text:
        raise ValueError(f"embedded NUL character in {text!r}")
    return os.fsencode(text)


# --------------------------------------------------------------- results


@dataclass
class DMAConnectivity:
    """A detection result.

    ``matrix[i][j]`` is the connectivity from device i to device j: 0 for
    none, otherwise connection-specific (the number of links for nvlink).
    Device i is the runtime's ordinal i; ``devices[i]`` holds its properties
    ("ordinal", "name", "pci_bus_id", "uuid", ...).  ``pairs`` lists the
    pairs that have properties (cuda/p2p: "read", "write", "atomics",
    "path", ...), each as a dict with "from" and "to".  ``device_type`` is a
    string such as "cuda", or, from detect_dma_connectivity(), the object the
    caller passed.
    """

    device_type: Any
    connection_type: str
    matrix: Matrix
    devices: List[Dict[str, Any]] = field(default_factory=list)
    pairs: List[Dict[str, Any]] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)

    def pair(self, i: int, j: int) -> Dict[str, Any]:
        """The properties of the pair i -> j (empty when it has none)."""
        facts = self.__dict__.get("_pair_facts")
        if facts is not None:
            return facts.get(i, j)
        for entry in self.pairs:
            if entry["from"] == i and entry["to"] == j:
                return {k: v for k, v in entry.items() if k not in ("from", "to")}
        return {}

    def as_dict(self) -> Dict[str, Any]:
        """The result as one entry of ``dmaconn --json``'s "results"."""
        return {
            "device_type": _type_name(self.device_type),
            "connection_type": self.connection_type,
            "matrix": [list(row) for row in self.matrix],
            "devices": [dict(d) for d in self.devices],
            "pairs": [dict(p) for p in self.pairs],
            "warnings": list(self.warnings),
        }


class _PairFacts:
    """A result's pair properties as the library stores them: per pair the
    number of its property list (dmaconn_result_pair_lists), and each
    distinct list once, read from C when the result is made.  A rack has
    n*n pairs (331,200 at 576 GPUs) and few distinct lists, so the list of
    dicts ``DMAConnectivity.pairs`` is only built when it is first read."""

    def __init__(self, lib: ctypes.CDLL, r: int, n: int) -> None:
        self.n = n
        self.lists = array.array("I")
        self.templates: Dict[int, Dict[str, Any]] = {}
        if n <= 0:
            return
        ids = (ctypes.c_uint * (n * n))()
        if lib.dmaconn_result_pair_lists(r, ids, n * n) != 0:
            return
        self.lists.frombytes(bytes(ids))
        for list_id in set(self.lists):
            if list_id:
                i, j = divmod(self.lists.index(list_id), n)
                props: Dict[str, Any] = {}
                for k in range(lib.dmaconn_result_pair_property_count(r, i, j)):
                    key = _decode(lib.dmaconn_result_pair_property_key(r, i, j, k))
                    if key not in props and key not in ("from", "to"):
                        props[key] = typed_value(key, _decode(lib.dmaconn_result_pair_property_value(r, i, j, k)))
                self.templates[list_id] = props

    def get(self, i: int, j: int) -> Dict[str, Any]:
        if not (0 <= i < self.n and 0 <= j < self.n) or not self.lists:
            return {}
        return dict(self.templates.get(self.lists[i * self.n + j], {}))

    def entries(self) -> List[Dict[str, Any]]:
        n, templates = self.n, self.templates
        if not templates:
            return []
        return [{"from": at // n, "to": at % n, **templates[list_id]}
                for at, list_id in enumerate(self.lists) if list_id]


def _pairs_get(self: DMAConnectivity) -> List[Dict[str, Any]]:
    facts = self.__dict__.pop("_pair_facts", None)
    if facts is not None:
        self.__dict__["_pairs"] = facts.entries()
    return self.__dict__.setdefault("_pairs", [])


def _pairs_set(self: DMAConnectivity, value: Any) -> None:
    self.__dict__.pop("_pair_facts", None)
    if isinstance(value, _PairFacts):
        self.__dict__["_pair_facts"] = value
        self.__dict__.pop("_pairs", None)
    else:
        self.__dict__["_pairs"] = value


# ``pairs`` reads as a list; from C it is made on first reading (_PairFacts).
DMAConnectivity.pairs = property(_pairs_get, _pairs_set)  # type: ignore[assignment]


def _result_from_c(lib: ctypes.CDLL, r: int) -> DMAConnectivity:
    n = lib.dmaconn_result_size(r)
    flat = lib.dmaconn_result_matrix(r)
    values = array.array("i")
    if n > 0 and flat:
        # One copy of the n*n ints, not n*n ctypes conversions.
        values.frombytes(ctypes.string_at(flat, n * n * values.itemsize))
    matrix = [values[i * n : (i + 1) * n].tolist() for i in range(n)]
    devices: List[Dict[str, Any]] = []
    for i in range(n):
        props: Dict[str, Any] = {"ordinal": i}
        for k in range(lib.dmaconn_result_device_property_count(r, i)):
            key = _decode(lib.dmaconn_result_device_property_key(r, i, k))
            if key not in props:
                props[key] = typed_value(key, _decode(lib.dmaconn_result_device_property_value(r, i, k)))
        devices.append(props)
    pairs = _PairFacts(lib, r, n)
    return DMAConnectivity(
        device_type=_decode(lib.dmaconn_device_type_name(lib.dmaconn_result_device_type(r))),
        connection_type=_decode(lib.dmaconn_result_connection_type(r)),
        matrix=matrix,
        devices=devices,
        pairs=pairs,
        warnings=[
            _decode(lib.dmaconn_result_warning(r, k))
            for k in range(lib.dmaconn_result_warning_count(r))
        ],
    )


# --------------------------------------------------------------- warnings

_tls = threading.local()


def _pending_stack() -> List[List[str]]:
    """This thread's warning lists, one per detect() call in progress."""
    stack = getattr(_tls, "pending", None)
    if stack is None:
        stack = _tls.pending = []
    return stack


def _on_warning(message: Optional[bytes], user_data: Optional[int]) -> None:
    # Runs on the detecting thread; must never raise into C.
    try:
        text = _decode(message)
        stack = _pending_stack()
        if stack:
            stack[-1].append(text)
        else:  # a detection Python did not start (another thread, C code)
            warnings.warn(text, DmaconnWarning, stacklevel=2)
    except BaseException:  # noqa: BLE001
        pass


_warning_handler = _library.WARNING_FN(_on_warning)


def _install_handler(lib: ctypes.CDLL) -> None:
    lib.dmaconn_set_warning_handler(_warning_handler, None)


_library._on_load.append(_install_handler)


# ---------------------------------------------------------------- helpers


def _lib() -> ctypes.CDLL:
    return _library.get()


def _last_error(lib: ctypes.CDLL, code: int) -> Error:
    """The exception for code, with this thread's message (read at once)."""
    message = _decode(lib.dmaconn_last_error()) or _decode(lib.dmaconn_strerror(code))
    return _errors.error_for(code, message)


def _check(lib: ctypes.CDLL, code: int) -> None:
    if code != _errors.OK:
        raise _last_error(lib, code)


def _type_name(device_type: Any) -> str:
    """The name in a device type given as a string or an enum-like object.

    Accepts "cuda"/"CUDA", PyTorch's DeviceType.CUDA (by its ``name``, or
    str() as "DeviceType.CUDA"), and torch.device-like objects (``type``).
    """
    if isinstance(device_type, str):
        name = device_type
    elif isinstance(getattr(device_type, "name", None), str):
        name = device_type.name
    elif isinstance(getattr(device_type, "type", None), str):
        name = device_type.type
    elif isinstance(device_type, (int, bytes)) or device_type is None:
        raise TypeError(
            f"device_type must be a string or an enum-like DeviceType, not {type(device_type).__name__}"
        )
    else:
        name = str(device_type).rpartition(".")[2]
    return _ALIASES.get(name.lower(), name)


def _parse_type(lib: ctypes.CDLL, device_type: Any) -> int:
    out = ctypes.c_int()
    _check(lib, lib.dmaconn_device_type_parse(_encode(_type_name(device_type)), ctypes.byref(out)))
    return out.value


def _connection(connection_type: Any) -> bytes:
    if not isinstance(connection_type, str):
        raise TypeError(f"connection_type must be a string, not {type(connection_type).__name__}")
    return _encode(connection_type)


def device_type_name(device_type: Any) -> str:
    """The library's name ("cuda", "rocm", "xpu") for a device type."""
    lib = _lib()
    return _decode(lib.dmaconn_device_type_name(_parse_type(lib, device_type)))


# -------------------------------------------------------------- detection


def _detect(device_type: Any, connection_type: str, fresh: bool, stacklevel: int) -> DMAConnectivity:
    lib = _lib()
    ctype = _parse_type(lib, device_type)
    conn = _connection(connection_type)
    out = ctypes.c_void_p()
    pending: List[str] = []
    _take_detector_exception(ctype, connection_type)
    stack = _pending_stack()
    stack.append(pending)
    error: Optional[Error] = None
    try:
        call = lib.dmaconn_detect_fresh if fresh else lib.dmaconn_detect
        code = call(ctype, conn, ctypes.byref(out))
        if code != _errors.OK:
            error = _last_error(lib, code)
    finally:
        stack.pop()
    cause = _take_detector_exception(ctype, connection_type)
    for message in pending:
        warnings.warn(message, DmaconnWarning, stacklevel=stacklevel + 1)
    if error is not None:
        if cause is not None and isinstance(error, DetectorError):
            error = DetectorError(f"{error.message}: {type(cause).__name__}: {cause}", error.code)
            raise error from cause
        raise error
    try:
        return _result_from_c(lib, out.value)
    finally:
        lib.dmaconn_result_release(out)


def detect(device_type: Any, connection_type: str, *, fresh: bool = False) -> DMAConnectivity:
    """Detects DMA connectivity between the devices of a type over a connection.

    The first result for each pair is cached by the library for the process;
    ``fresh=True`` detects again and replaces it.  Each detection's warnings
    go to ``warnings.warn`` (category DmaconnWarning) once, when it runs.
    Raises NoDetectorError for an unregistered pair, ReplayError, DetectorError,
    InvalidArgumentError (all dmaconn.Error).
    """
    return _detect(device_type, connection_type, fresh, stacklevel=2)


def detect_dma_connectivity(device_type: Any, connection_type: str) -> DMAConnectivity:
    """Drop-in for ``torch._C._distributed_c10d._detect_dma_connectivity``.

    ``device_type`` may be PyTorch's ``DeviceType.CUDA`` (returned as given in
    the result's ``device_type``) or a string such as "cuda".  Unknown pairs
    raise NoDetectorError, a RuntimeError as in PyTorch.
    """
    result = _detect(device_type, connection_type, False, stacklevel=2)
    if not isinstance(device_type, str):
        result.device_type = device_type
    return result


def clear_cache() -> None:
    """Drops every cached result; the next detect() of each pair runs afresh."""
    _lib().dmaconn_clear_cache()


def version() -> str:
    """The shared library's version, e.g. "0.1.0"."""
    return _decode(_lib().dmaconn_version_string())


def library_path() -> str:
    """The path of the loaded shared library."""
    return _library.path()


def list_detectors() -> List[Tuple[str, str]]:
    """The registered (device_type, connection_type) pairs, built-in ones first."""
    lib = _lib()
    while True:
        count = lib.dmaconn_list_detectors(None, None, 0)
        types = (ctypes.c_int * max(count, 1))()
        conns = (ctypes.c_char_p * max(count, 1))()
        got = lib.dmaconn_list_detectors(types, conns, count)
        if got <= count:  # else a detector was registered meanwhile: ask again
            return [
                (_decode(lib.dmaconn_device_type_name(types[i])), _decode(conns[i]))
                for i in range(got)
            ]


def strerror(code: int) -> str:
    """The library's text for an error code."""
    return _decode(_lib().dmaconn_strerror(code))


# ------------------------------------------------------------ verification

VERIFY_STATUS = ("pass", "fail", "no_peer")


@dataclass
class VerifyResult:
    """What verify() found: one entry per ordered pair i != j.

    ``pairs`` holds dicts with "from", "to", "status" ("pass", "fail" or
    "no_peer") and the pair's properties ("reason", "gbps", "latency_us", ...).
    """

    device_type: str
    size: int
    pairs: List[Dict[str, Any]] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)

    def status(self, i: int, j: int) -> str:
        """The status of the pair i -> j ("fail" for pairs not checked)."""
        for entry in self.pairs:
            if entry["from"] == i and entry["to"] == j:
                return entry["status"]
        return "fail"

    def as_dict(self) -> Dict[str, Any]:
        """The result as ``dmaconn --verify --json``'s "verify" member."""
        return {
            "device_type": self.device_type,
            "pairs": [dict(p) for p in self.pairs],
            "warnings": list(self.warnings),
        }

    @property
    def ok(self) -> bool:
        """Some pair was checked and none failed (nothing checked proves nothing)."""
        return bool(self.pairs) and all(entry["status"] != "fail" for entry in self.pairs)


# dmaconn_verify() takes the bound as a C int of milliseconds.
VERIFY_TIMEOUT_MAX_MS = 2**31 - 1
_VERIFY_TIMEOUT_MAX_S = f"{VERIFY_TIMEOUT_MAX_MS // 1000}.{VERIFY_TIMEOUT_MAX_MS % 1000:03d}"


def _timeout_ms(timeout: Any) -> int:
    """verify()'s timeout in milliseconds (0: the library's default); refuses,
    rather than wraps or clamps, what dmaconn_verify() cannot take."""
    if timeout is None:
        return 0
    if isinstance(timeout, bool) or not isinstance(timeout, (numbers.Real, Decimal)):
        raise TypeError(f"timeout must be a number of seconds or None, not {type(timeout).__name__}")
    try:
        # Exact (no float rounding at the limit) for Rational, float and
        # Decimal, in Python's own ints (numpy's wrap); any other Real
        # (numpy.float32) through its float.
        if isinstance(timeout, numbers.Rational):
            exact = Fraction(operator.index(timeout.numerator), operator.index(timeout.denominator))
        elif isinstance(timeout, (float, Decimal)):
            exact = Fraction(timeout)
        else:
            exact = Fraction(float(timeout))
        ms = exact * 1000
    except (ValueError, OverflowError, TypeError, ArithmeticError):
        raise ValueError(f"timeout must be a finite number of seconds, not {timeout!r}") from None
    if ms <= 0:
        raise ValueError(
            f"timeout must be more than 0 seconds (None: the library's default), not {timeout!r}"
        )
    whole = max(1, round(ms))  # to the nearest millisecond, at least 1
    if whole > VERIFY_TIMEOUT_MAX_MS:
        raise ValueError(
            f"timeout must be at most {_VERIFY_TIMEOUT_MAX_S} seconds (dmaconn_verify() takes "
            f"{VERIFY_TIMEOUT_MAX_MS} ms at most), not {timeout!r}"
        )
    return whole


def verify(device_type: Any = "cuda", timeout: Optional[float] = None) -> VerifyResult:
    """Proves peer load/store/atomics by running a kernel on every pair.

    The work runs in a helper process, so this process stays CUDA-free.
    ``timeout`` bounds the run in seconds (None: the library's default, 120;
    at most 2147483.647, dmaconn_verify()'s int of milliseconds); TypeError
    for a bool or a non-number, ValueError for NaN, infinity, 0 or less, or
    more than that limit.  UnavailableError when the library or the device
    type has no verifier.
    """
    timeout_ms = _timeout_ms(timeout)
    lib = _lib()
    if not _library.has_verify:
        raise _errors.UnavailableError(
            f"{_library.path()} has no functional check (dmaconn_verify_run)", _errors.EUNAVAILABLE
        )
    ctype = _parse_type(lib, device_type)
    out = ctypes.c_void_p()
    pending: List[str] = []
    stack = _pending_stack()
    stack.append(pending)
    try:
        code = lib.dmaconn_verify_run(ctype, timeout_ms, ctypes.byref(out))
        error = _last_error(lib, code) if code != _errors.OK else None
    finally:
        stack.pop()
    try:
        if error is not None:
            for message in pending:
                warnings.warn(message, DmaconnWarning, stacklevel=2)
            raise error
        # The verification is a result (connection "verify"): each pair's
        # "status" first, then the helper's properties, typed as detect()'s.
        found = _result_from_c(lib, out.value)
        result = VerifyResult(
            device_type=found.device_type,
            size=len(found.matrix),
            pairs=found.pairs,
            warnings=found.warnings,
        )
    finally:
        if out.value:
            lib.dmaconn_result_release(out)
    for message in pending + [w for w in result.warnings if w not in pending]:
        warnings.warn(message, DmaconnWarning, stacklevel=2)
    return result


# -------------------------------------------------------- Python detectors


@dataclass
class _PyDetector:
    fn: Callable[[], Any]
    pair: Tuple[int, str]


_detectors: Dict[int, _PyDetector] = {}
_by_pair: Dict[Tuple[int, str], int] = {}
_tokens = itertools.count(1)
_registry_lock = threading.Lock()


def _detector_exceptions() -> Dict[Tuple[int, str], BaseException]:
    errors = getattr(_tls, "detector_errors", None)
    if errors is None:
        errors = _tls.detector_errors = {}
    return errors


def _take_detector_exception(ctype: int, connection: str) -> Optional[BaseException]:
    return _detector_exceptions().pop((ctype, connection), None)


_OUTPUT_KEYS = ("devices", "pairs", "warnings")


def _unpack(output: Any) -> Tuple[Any, Dict[str, Any]]:
    """(matrix, {"devices", "pairs", "warnings"}) from what a detector returned."""
    if isinstance(output, Mapping):
        if "matrix" not in output:
            raise ValueError("a detector's mapping needs a 'matrix' key")
        return output["matrix"], {key: output.get(key) for key in _OUTPUT_KEYS}
    if hasattr(output, "matrix"):
        return output.matrix, {key: getattr(output, key, None) for key in _OUTPUT_KEYS}
    return output, {}


def _validate_matrix(matrix: Any) -> Matrix:
    if hasattr(matrix, "tolist"):  # numpy arrays, tensors
        matrix = matrix.tolist()
    if isinstance(matrix, (str, bytes)) or not isinstance(matrix, Sequence):
        raise TypeError(f"a detector must return a list of lists of int, not {type(matrix).__name__}")
    rows: Matrix = []
    n = len(matrix)
    for i, row in enumerate(matrix):
        if isinstance(row, (str, bytes)) or not isinstance(row, Sequence):
            raise TypeError(f"matrix row {i} is a {type(row).__name__}, not a list of int")
        if len(row) != n:
            raise ValueError(f"the matrix is not square: row {i} has {len(row)} values for {n} rows")
        values = []
        for j, value in enumerate(row):
            if isinstance(value, bool):
                raise TypeError(f"matrix[{i}][{j}] is a bool, not an int")
            v = operator.index(value)
            if i == j and v != 0:
                raise ValueError(f"matrix[{i}][{i}] is {v}; the diagonal must be 0")
            if not 0 <= v <= _INT_MAX:
                raise ValueError(f"matrix[{i}][{j}] is {v}; values are 0 to {_INT_MAX}")
            values.append(v)
        rows.append(values)
    return rows


def _pair_entries(pairs: Any) -> List[Tuple[int, int, Mapping[str, Any]]]:
    """(i, j, properties) from a list of {"from", "to", ...} or a {(i, j): {...}} mapping."""
    if isinstance(pairs, Mapping):
        out = []
        for key, props in pairs.items():
            i, j = key
            out.append((operator.index(i), operator.index(j), props))
        return out
    out = []
    for entry in pairs:
        if not isinstance(entry, Mapping) or "from" not in entry or "to" not in entry:
            raise TypeError('pairs entries are mappings with "from" and "to"')
        props = {k: v for k, v in entry.items() if k not in ("from", "to")}
        out.append((operator.index(entry["from"]), operator.index(entry["to"]), props))
    return out


def _fill(lib: ctypes.CDLL, builder: int, output: Any) -> None:
    raw_matrix, extra = _unpack(output)
    matrix = _validate_matrix(raw_matrix)
    n = len(matrix)
    devices = list(extra.get("devices") or [])
    if len(devices) > n:
        raise ValueError(f"{len(devices)} device entries for a {n}x{n} matrix")
    pairs = _pair_entries(extra.get("pairs") or [])
    messages = extra.get("warnings") or []
    if isinstance(messages, str):
        messages = [messages]
    _check(lib, lib.dmaconn_builder_set_size(builder, n))
    for i, row in enumerate(matrix):
        for j, v in enumerate(row):
            if v:
                _check(lib, lib.dmaconn_builder_set(builder, i, j, v))
    for i, props in enumerate(devices):
        if not isinstance(props, Mapping):
            raise TypeError(f"device {i} is a {type(props).__name__}, not a mapping")
        for key, value in props.items():
            if key != "ordinal":
                _check(
                    lib,
                    lib.dmaconn_builder_set_device_property(
                        builder, i, _encode(str(key)), _encode(str(value))
                    ),
                )
    for i, j, props in pairs:
        if not isinstance(props, Mapping):
            raise TypeError(f"pair ({i}, {j}) has a {type(props).__name__}, not a mapping")
        for key, value in props.items():
            _check(
                lib,
                lib.dmaconn_builder_set_pair_property(
                    builder, i, j, _encode(str(key)), _encode(str(value))
                ),
            )
    for message in messages:
        _check(lib, lib.dmaconn_builder_warn(builder, b"%s", _encode(str(message))))


def _run_python_detector(builder: Optional[int], user_data: Optional[int]) -> int:
    # Called by the library on the detecting thread; must never raise into C.
    try:
        entry = _detectors.get(user_data or 0)
        if entry is None:
            return _errors.ENODETECTOR
        _tls.in_detector = getattr(_tls, "in_detector", 0) + 1
        try:
            _fill(_lib(), builder or 0, entry.fn())
        except BaseException as exc:  # noqa: BLE001
            _detector_exceptions()[entry.pair] = exc
            return _errors.EDETECTOR
        finally:
            _tls.in_detector -= 1
        return _errors.OK
    except BaseException:  # noqa: BLE001
        return _errors.EDETECTOR


_trampoline = _library.DETECTOR_FN(_run_python_detector)


def register_detector(device_type: Any, connection_type: str, fn: Callable[[], Any]) -> None:
    """Registers a Python detector for (device_type, connection_type).

    ``fn()`` returns the matrix (a square list of lists of int, diagonal 0),
    or a mapping or object with "matrix" and optional "devices" (a list of
    property dicts), "pairs" (dicts with "from", "to" and properties, or a
    {(i, j): properties} mapping) and "warnings" (a list of str).  An exception in fn makes
    detect() raise DetectorError from it.  DetectorExistsError when the pair
    already has a detector.  fn may run on any thread that detects.
    """
    if not callable(fn):
        raise TypeError("fn must be callable")
    lib = _lib()
    ctype = _parse_type(lib, device_type)
    conn = _connection(connection_type)
    with _registry_lock:
        token = next(_tokens)
        _detectors[token] = _PyDetector(fn, (ctype, connection_type))
        code = lib.dmaconn_register_detector(ctype, conn, _trampoline, token)
        if code != _errors.OK:
            del _detectors[token]
            raise _last_error(lib, code)
        _by_pair[(ctype, connection_type)] = token


def unregister_detector(device_type: Any, connection_type: str) -> None:
    """Removes a detector registered at run time (NoDetectorError if none)."""
    lib = _lib()
    ctype = _parse_type(lib, device_type)
    conn = _connection(connection_type)
    with _registry_lock:
        _check(lib, lib.dmaconn_unregister_detector(ctype, conn))
        token = _by_pair.pop((ctype, connection_type), None)
        if token is not None:
            _detectors.pop(token, None)


def shutdown() -> None:
    """Resets the library: drops the cache and every run-time detector and
    unloads NVML; the next detection starts over (DMACONN_REPLAY included).
    Not to be called while another thread uses dmaconn.  BusyError inside
    a detector: the detection that runs it still uses what it would drop.
    """
    lib = _lib()
    if getattr(_tls, "in_detector", 0):
        raise _errors.BusyError("dmaconn.shutdown() inside a detector does nothing", _errors.EBUSY)
    with _registry_lock:
        lib.dmaconn_shutdown()
        _by_pair.clear()
        _detectors.clear()
    _install_handler(lib)


@atexit.register
def _at_exit() -> None:
    """Detaches Python from the library before the interpreter goes away."""
    lib = _library._lib
    if lib is None:
        return
    with _registry_lock:
        for ctype, conn in list(_by_pair):
            lib.dmaconn_unregister_detector(ctype, _encode(conn))
        _by_pair.clear()
        _detectors.clear()
    lib.dmaconn_set_warning_handler(_library.WARNING_FN(), None)
