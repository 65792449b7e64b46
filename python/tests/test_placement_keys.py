# SPDX-License-Identifier: BSD-3-Clause
"""The placement's keys in Python are the library's: listed by
dmaconn_placement_key(), typed by dmaconn_property_type_of(), with no list of
their own in the binding."""

from __future__ import annotations

import re
import unittest

import _support

from dmaconn import _json, _library

HEADER = _support.PYTHON_DIR.parent / "include" / "dmaconn.h"
_TYPES = {"integer": int, "number": float, "boolean": bool, "array": list}


def library_keys() -> list:
    lib = _library.get()
    return [lib.dmaconn_placement_key(k).decode() for k in range(lib.dmaconn_placement_key_count())]


class PlacementKeysTest(unittest.TestCase):
    def test_the_headers_keys_in_order(self) -> None:
        # Every DMACONN_PLACE_* key of the public header, in its order: a key
        # added there and not to the library's list shows here.
        header = re.findall(r'^#define DMACONN_PLACE_\w+ "([^"]+)"', HEADER.read_text(), re.M)
        self.assertGreater(len(header), 20)
        self.assertEqual(library_keys(), header)

    def test_out_of_range(self) -> None:
        lib = _library.get()
        self.assertIsNone(lib.dmaconn_placement_key(-1))
        self.assertIsNone(lib.dmaconn_placement_key(lib.dmaconn_placement_key_count()))

    def test_python_types_them_as_the_library(self) -> None:
        lib = _library.get()
        types = _json.property_types()
        typed = []
        for key in library_keys():
            json_type = lib.dmaconn_property_json_type(lib.dmaconn_property_type_of(key.encode())).decode()
            self.assertEqual(types.get(key), _TYPES.get(json_type), key)
            if json_type != "string":
                typed.append(key)
        self.assertEqual(sorted(typed), ["c2c_links", "c2c_max_bw_mbs", "cpu_family", "cpu_model",
                                         "cpu_numa_node", "memory_numa_node"])
        # and a value of one reads as the library reads it
        self.assertEqual(_json.typed_value("cpu_numa_node", "1"), 1)
        self.assertIsNone(_json.typed_value("cpu_numa_node", "one"))
        self.assertEqual(_json.typed_value("cpuset", "0-55"), "0-55")

    def test_no_python_copy(self) -> None:
        self.assertFalse(hasattr(_json, "_PLACEMENT_KEYS"))


if __name__ == "__main__":
    unittest.main()
