# SPDX-License-Identifier: BSD-3-Clause
"""Typed property values, as the C tool's ``--json`` writes them.

The types are the library's property table (``DMACONN_PROPERTIES`` in
include/dmaconn_props.h), asked through ctypes, and the library reads each
value: a typed key's value is an int, float or bool, ``None`` where it is
unknown or does not read as its type; every other key (a user detector's
included) stays a string.
"""

import ctypes
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _library

JSON_VERSION = 1  # the "version" member of the document (docs/json-output.md)

# The JSON type of each declared key whose values are not strings, made on
# first use from the library's table.
_types: Optional[Dict[str, type]] = None
_types_lock = threading.Lock()
_PYTHON_TYPES = {"integer": int, "number": float, "boolean": bool, "array": list}


def property_types() -> Dict[str, type]:
    """{key: int, float, bool or list} for the declared keys that are not strings:
    the properties of a result and the placement's keys (dmaconn.h,
    "Placement"), both listed and typed by the library."""
    global _types
    if _types is not None:
        return _types
    with _types_lock:
        if _types is None:
            lib = _library.get()
            table: Dict[str, type] = {}
            keys = [lib.dmaconn_property_key(k) for k in range(lib.dmaconn_property_count())]
            keys += [lib.dmaconn_placement_key(k) for k in range(lib.dmaconn_placement_key_count())]
            for key in keys:
                json_type = lib.dmaconn_property_json_type(lib.dmaconn_property_type_of(key))
                if json_type and json_type.decode() in _PYTHON_TYPES:
                    table[key.decode()] = _PYTHON_TYPES[json_type.decode()]
            _types = table
        return _types


def _read(reader: Callable[..., int], key: str, value: str, out: Any) -> Any:
    if reader(key.encode(), value.encode("utf-8", "surrogateescape"), ctypes.byref(out)) != 0:
        return None
    return out.value


# Values read, by (key, text): a result repeats the same few across its
# devices and pairs.  Bounded; dropped whole when full.
_read_cache: Dict[Tuple[str, str], Any] = {}
_READ_CACHE_MAX = 4096


def typed_value(key: str, value: Optional[str]) -> Any:
    """A property's value with the type its key has in JSON."""
    kind = property_types().get(key)
    if kind is None or value is None:
        return value
    try:
        return _read_cache[(key, value)]
    except KeyError:
        pass
    typed = _typed(kind, key, value)
    if kind is list:
        return typed  # a new list each time: callers may change it
    if len(_read_cache) >= _READ_CACHE_MAX:
        _read_cache.clear()
    _read_cache[(key, value)] = typed
    return typed


def _cliques(value: str) -> Optional[List[Dict[str, Any]]]:
    """Typed cliques, "multicast_pointer:7,unicast_pointer:5", as a list of
    {"type", "id"} (the CLI's JSON); None where the text reads otherwise."""
    out: List[Dict[str, Any]] = []
    for entry in value.split(",") if value else []:
        kind, sep, ident = entry.partition(":")
        if not sep or not kind or len(kind) >= 64 or not ident.isascii() or not ident.isdigit():
            return None
        number = int(ident)  # the ids of fabric_cliques, checked as digits above
        if number > 0xFFFFFFFF:
            return None
        out.append({"type": kind, "id": number})
    return out


def _typed(kind: type, key: str, value: str) -> Any:
    lib = _library.get()
    if kind is list:
        return _cliques(value)
    if kind is int:
        return _read(lib.dmaconn_property_read_int, key, value, ctypes.c_longlong())
    if kind is float:
        return _read(lib.dmaconn_property_read_number, key, value, ctypes.c_double())
    flag = _read(lib.dmaconn_property_read_bool, key, value, ctypes.c_int())
    return None if flag is None else bool(flag)
