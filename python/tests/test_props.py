# SPDX-License-Identifier: BSD-3-Clause
"""Property typing in Python: the library's table, read through ctypes."""

from __future__ import annotations

import ctypes
import unittest

import _support  # sets up sys.path and the environment

import dmaconn
from dmaconn import _json, _library


class TableTest(unittest.TestCase):
    def test_types_are_the_librarys(self) -> None:
        # Every typed key of the C table, and only those, with its JSON type.
        lib = _library.get()
        want = {}
        for k in range(lib.dmaconn_property_count()):
            key = lib.dmaconn_property_key(k)
            json_type = lib.dmaconn_property_json_type(lib.dmaconn_property_type_of(key)).decode()
            if json_type != "string":
                want[key.decode()] = {"integer": int, "number": float, "boolean": bool, "array": list}[json_type]
        # and the placement's integer keys, which the library lists and types too
        for k in range(lib.dmaconn_placement_key_count()):
            key = lib.dmaconn_placement_key(k)
            if lib.dmaconn_property_json_type(lib.dmaconn_property_type_of(key)) == b"integer":
                want[key.decode()] = int
        self.assertEqual(_json.property_types(), want)
        self.assertGreater(len(want), 30)
        self.assertIs(want["nvml_index"], int)
        self.assertIs(want["nvlink_gbps"], float)
        self.assertIs(want["peer_dma"], bool)
        # Kept strings: hexadecimal ids, link lists, the BAR1 size of version 1.
        for key in ("hive_id", "nvlink_inactive_links", "bar1_mib", "compute_capability", "name"):
            self.assertNotIn(key, want)

    def test_no_python_copy(self) -> None:
        self.assertFalse(hasattr(_json, "PROPERTY_TYPES"))


class TypedValueTest(unittest.TestCase):
    def test_values(self) -> None:
        tv = _json.typed_value
        self.assertEqual(tv("nvml_index", "3"), 3)
        self.assertEqual(tv("nvml_index", "-3"), -3)
        self.assertIsNone(tv("nvml_index", " 3"))
        self.assertIsNone(tv("nvml_index", "3 "))
        self.assertIsNone(tv("nvml_index", "9223372036854775808"))
        self.assertEqual(tv("nvml_index", "9223372036854775807"), 2**63 - 1)
        self.assertIsNone(tv("xgmi_links", "unknown"))
        self.assertEqual(tv("nvlink_gbps", "478.1"), 478.1)
        self.assertIsNone(tv("nvlink_gbps", "inf"))
        self.assertIsNone(tv("nvlink_gbps", ""))
        self.assertIs(tv("enabled", "yes"), True)
        self.assertIs(tv("enabled", "false"), False)
        self.assertIs(tv("enabled", "1"), True)
        self.assertIsNone(tv("enabled", "2"))
        self.assertEqual(tv("hive_id", "0x1a"), "0x1a")
        self.assertEqual(tv("my_own_key", "5"), "5")
        self.assertIsNone(tv("nvml_index", None))


class ResultTest(unittest.TestCase):
    def test_a_detectors_values_typed(self) -> None:
        # A user detector's declared keys come typed, its own keys as strings.
        conn = "proptyping"

        def fn():
            return {
                "matrix": [[0, 1], [1, 0]],
                "devices": [{"nvml_index": "4", "hive_id": "0xff", "mine": "7"}, {"nvml_index": "x"}],
                "pairs": [{"from": 0, "to": 1, "nvlink_gbps": "12.5", "peer_dma": "yes", "mine": "1"}],
            }

        dmaconn.register_detector("cuda", conn, fn)
        try:
            r = dmaconn.detect("cuda", conn)
        finally:
            dmaconn.unregister_detector("cuda", conn)
        self.assertEqual(r.devices[0]["nvml_index"], 4)
        self.assertEqual(r.devices[0]["hive_id"], "0xff")
        self.assertEqual(r.devices[0]["mine"], "7")
        self.assertIsNone(r.devices[1]["nvml_index"])
        pair = [p for p in r.pairs if (p["from"], p["to"]) == (0, 1)][0]
        self.assertEqual(pair["nvlink_gbps"], 12.5)
        self.assertIs(pair["peer_dma"], True)
        self.assertEqual(pair["mine"], "1")

    def test_readers_in_c(self) -> None:
        # The reader Python uses is the C one the typed getters use.
        lib = _library.get()
        out = ctypes.c_longlong()
        self.assertEqual(lib.dmaconn_property_read_int(b"hive_id", b"0x10", ctypes.byref(out)), 0)
        self.assertEqual(out.value, 16)
        self.assertEqual(lib.dmaconn_property_read_int(b"name", b"1", ctypes.byref(out)), -1)


if __name__ == "__main__":
    unittest.main()
