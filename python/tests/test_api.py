# SPDX-License-Identifier: BSD-3-Clause
"""The binding in this process: errors, types, Python detectors, warnings."""

from __future__ import annotations

import enum
import itertools
import numbers
import os
import threading
import unittest
import warnings
from typing import Any, Callable, List

import _support  # sets up sys.path and the environment

import dmaconn

_names = itertools.count()


def unique_connection() -> str:
    return f"pytest{next(_names)}"


class DeviceType(enum.Enum):
    """Looks like torch._C._autograd.DeviceType to the binding."""

    CPU = 0
    CUDA = 1
    HIP = 6
    XPU = 12


class StrOnly:
    """An enum-like object known only by str(), as "DeviceType.CUDA"."""

    def __str__(self) -> str:
        return "DeviceType.CUDA"


class PythonDetectorCase(unittest.TestCase):
    """Registers Python detectors under fresh names and removes them afterwards."""

    def register(self, fn: Callable[[], Any], device_type: Any = "cuda") -> str:
        conn = unique_connection()
        dmaconn.register_detector(device_type, conn, fn)
        self.addCleanup(self._unregister, device_type, conn)
        return conn

    @staticmethod
    def _unregister(device_type: Any, conn: str) -> None:
        try:
            dmaconn.unregister_detector(device_type, conn)
        except dmaconn.NoDetectorError:
            pass

    def detect_recording(self, *args: Any, **kwargs: Any):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = dmaconn.detect(*args, **kwargs)
        return result, [str(w.message) for w in caught if w.category is dmaconn.DmaconnWarning]


class LibraryTest(unittest.TestCase):
    def test_version(self) -> None:
        self.assertRegex(dmaconn.version(), r"^\d+\.\d+\.\d+$")
        self.assertEqual(dmaconn.version(), dmaconn.__version__)

    def test_library_path(self) -> None:
        self.assertTrue(dmaconn.library_path().endswith("libdmaconn.so.0"))

    def test_builtin_detectors_listed_first(self) -> None:
        self.assertEqual(dmaconn.list_detectors()[:2], [("cuda", "nvlink"), ("cuda", "p2p")])

    def test_strerror(self) -> None:
        self.assertEqual(dmaconn.strerror(-2), "no DMA connectivity detector for this pair")
        self.assertEqual(dmaconn.strerror(1234), "unknown error")

    def test_verify_without_helper(self) -> None:
        from dmaconn import _library

        if not _library.has_verify:
            with self.assertRaises(dmaconn.UnavailableError) as ctx:
                dmaconn.verify("cuda")
            self.assertEqual(ctx.exception.code, -9)
            return
        with self.assertRaises(dmaconn.UnavailableError):
            dmaconn.verify("xpu")
        os.environ["DMACONN_VERIFY_HELPER"] = "/nonexistent/dmaconn-verify-helper"
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                v = dmaconn.verify("cuda", timeout=30)
        finally:
            del os.environ["DMACONN_VERIFY_HELPER"]
        self.assertIsInstance(v, dmaconn.VerifyResult)
        self.assertEqual(v.device_type, "cuda")
        self.assertEqual(len(v.pairs), v.size * (v.size - 1))
        self.assertTrue(all(p["status"] == "fail" for p in v.pairs))
        # Nothing checked (no pair, or every pair failed) is never ok.
        self.assertFalse(v.ok)
        self.assertFalse(dmaconn.VerifyResult(device_type="cuda", size=0).ok)
        self.assertFalse(dmaconn.VerifyResult(device_type="cuda", size=1).ok)
        passed = dmaconn.VerifyResult("cuda", 2, [{"from": 0, "to": 1, "status": "pass"}])
        self.assertTrue(passed.ok)
        self.assertTrue(any("/nonexistent/dmaconn-verify-helper" in w for w in v.warnings))
        self.assertEqual([str(w.message) for w in caught if w.category is dmaconn.DmaconnWarning], v.warnings)


    def test_verify_timeout_is_validated(self) -> None:
        """What dmaconn_verify()'s int of milliseconds cannot take is refused,
        never wrapped or clamped, before anything runs."""
        from fractions import Fraction

        from dmaconn import _core, _library

        bad_types = [True, False, "30", b"30", [30], 1j, object()]
        bad_values = [
            float("nan"), float("inf"), float("-inf"), 0, 0.0, -0.0, -1, -1e-9,
            2147483.648, 2147484, 2**31, 2**32 + 18, 2**63, 1e300, 10**400,
        ]
        for value in bad_types:
            with self.subTest(value=value), self.assertRaisesRegex(TypeError, "number of seconds"):
                dmaconn.verify("cuda", timeout=value)
        for value in bad_values:
            with self.subTest(value=value), self.assertRaises(ValueError) as ctx:
                dmaconn.verify("cuda", timeout=value)
            if isinstance(value, (int, float)) and value > 0 and value != float("inf"):
                self.assertIn("2147483.647", str(ctx.exception))
        # What is taken reaches the library unchanged (to the millisecond).
        self.assertEqual(_core._timeout_ms(None), 0)
        self.assertEqual(_core._timeout_ms(30), 30000)
        self.assertEqual(_core._timeout_ms(1.5), 1500)
        self.assertEqual(_core._timeout_ms(Fraction(1, 3)), 333)
        self.assertEqual(_core._timeout_ms(1e-9), 1)
        self.assertEqual(_core._timeout_ms(2147483.647), 2**31 - 1)
        self.assertEqual(_core._timeout_ms(Fraction(2**31 - 1, 1000)), 2**31 - 1)
        # Decimal (taken before the limits were checked) and a Real that is
        # neither float nor Rational (numpy.float32 is one) are numbers too.
        from decimal import Decimal

        self.assertEqual(_core._timeout_ms(Decimal("1.5")), 1500)
        self.assertEqual(_core._timeout_ms(Decimal("2147483.647")), 2**31 - 1)
        self.assertEqual(_core._timeout_ms(_PlainReal(2.5)), 2500)
        self.assertEqual(_core._timeout_ms(_WrappingInt(2147483)), 2147483000)
        with self.assertRaisesRegex(ValueError, "at most"):
            _core._timeout_ms(_WrappingInt(2**63))  # as numpy.uint64: no wrap to 0 or below
        for value in [Decimal("NaN"), Decimal("sNaN"), Decimal("Infinity"), Decimal("-0"),
                      Decimal("2147483.648"), _PlainReal(float("nan")), _PlainReal(-1.0)]:
            with self.subTest(value=value), self.assertRaises(ValueError):
                _core._timeout_ms(value)
        if not _library.has_verify:
            return
        os.environ["DMACONN_VERIFY_HELPER"] = "/nonexistent/dmaconn-verify-helper"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                v = dmaconn.verify("cuda", timeout=2147483.647)
        finally:
            del os.environ["DMACONN_VERIFY_HELPER"]
        self.assertFalse(v.ok)

class _PlainReal(numbers.Real):
    """A numbers.Real that is neither a float nor a Rational (as numpy.float32)."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __float__(self) -> float:
        return self.value

    def __repr__(self) -> str:
        return f"_PlainReal({self.value!r})"


class _WrappingInt(int):
    """An Integral whose arithmetic wraps at 64 bits (as numpy.uint64's)."""

    def __mul__(self, other: Any) -> Any:
        return _WrappingInt((int(self) * int(other)) % 2**64 - 2**63)

    __rmul__ = __mul__

    @property
    def numerator(self) -> "_WrappingInt":
        return self

    def __repr__(self) -> str:
        return f"_WrappingInt({int(self)})"


for _name in _PlainReal.__abstractmethods__:
    setattr(_PlainReal, _name, lambda *args: NotImplemented)
_PlainReal.__abstractmethods__ = frozenset()
del _name


class ErrorTest(unittest.TestCase):
    def test_unknown_pair(self) -> None:
        with self.assertRaises(dmaconn.NoDetectorError) as ctx:
            dmaconn.detect("cuda", "bogus")
        err = ctx.exception
        self.assertEqual(err.code, -2)
        self.assertEqual(str(err), "no DMA connectivity detector for cuda over bogus")
        self.assertIsInstance(err, RuntimeError)
        self.assertIsInstance(err, dmaconn.Error)

    def test_unknown_pair_caught_as_runtime_error(self) -> None:
        with self.assertRaisesRegex(RuntimeError, "detector for cuda over bogus"):
            dmaconn.detect_dma_connectivity(DeviceType.CUDA, "bogus")

    def test_unknown_device_type(self) -> None:
        with self.assertRaises(dmaconn.InvalidArgumentError) as ctx:
            dmaconn.detect("tpu", "nvlink")
        self.assertEqual(ctx.exception.code, -1)
        self.assertIn("unknown device type 'tpu'", str(ctx.exception))
        self.assertIsInstance(ctx.exception, ValueError)
        with self.assertRaises(dmaconn.InvalidArgumentError):
            dmaconn.detect(DeviceType.CPU, "nvlink")

    def test_empty_connection(self) -> None:
        with self.assertRaises(dmaconn.InvalidArgumentError) as ctx:
            dmaconn.detect("cuda", "")
        self.assertEqual(str(ctx.exception), "empty connection type")

    def test_nul_in_names(self) -> None:
        # C would stop reading at the NUL and answer for "nvlink".
        for device_type, connection in (("cuda", "nvlink\x00garbage"), ("cuda\x00x", "nvlink")):
            with self.subTest(device_type=device_type, connection=connection):
                with self.assertRaises(ValueError):
                    dmaconn.detect(device_type, connection)
        with self.assertRaises(ValueError):
            dmaconn.register_detector("cuda", "mine\x00", lambda: [[0]])
        with self.assertRaises(ValueError):
            dmaconn.unregister_detector("cuda", "nvlink\x00")

    def test_wrong_argument_types(self) -> None:
        with self.assertRaises(TypeError):
            dmaconn.detect(1, "nvlink")
        with self.assertRaises(TypeError):
            dmaconn.detect("cuda", None)  # type: ignore[arg-type]

    def test_codes_of_classes(self) -> None:
        expected = {
            dmaconn.InvalidArgumentError: -1,
            dmaconn.NoDetectorError: -2,
            dmaconn.OutOfMemoryError: -3,
            dmaconn.DetectorExistsError: -4,
            dmaconn.DetectorError: -5,
            dmaconn.ReplayError: -6,
            dmaconn.BusyError: -7,
            dmaconn.RangeError: -8,
            dmaconn.UnavailableError: -9,
        }
        for cls, code in expected.items():
            with self.subTest(cls=cls.__name__):
                self.assertEqual(cls.code, code)
                self.assertEqual(cls("x").code, code)
                self.assertTrue(issubclass(cls, dmaconn.Error))
        self.assertTrue(issubclass(dmaconn.LibraryNotFoundError, ImportError))
        self.assertTrue(issubclass(dmaconn.DmaconnWarning, UserWarning))


@_support.needs_replay
class BuiltinInProcessTest(unittest.TestCase):
    """The built-in detector, on the topology _support pins for this process."""

    def test_detect_switch_machine(self) -> None:
        r = dmaconn.detect("cuda", "nvlink")
        self.assertEqual(r.device_type, "cuda")
        self.assertEqual(r.connection_type, "nvlink")
        self.assertEqual(r.matrix, [[0, 18], [18, 0]])
        self.assertEqual([d["ordinal"] for d in r.devices], [0, 1])
        self.assertEqual(r.devices[1]["pci_bus_id"], "0000:00:07.0")
        self.assertEqual(r.warnings, [])

    def test_results_are_independent_copies(self) -> None:
        a = dmaconn.detect("cuda", "nvlink")
        a.matrix[0][1] = 99
        b = dmaconn.detect("cuda", "nvlink")
        self.assertEqual(b.matrix, [[0, 18], [18, 0]])

    def test_detect_dma_connectivity_with_enum(self) -> None:
        r = dmaconn.detect_dma_connectivity(DeviceType.CUDA, "nvlink")
        self.assertIs(r.device_type, DeviceType.CUDA)
        self.assertEqual(r.connection_type, "nvlink")
        self.assertEqual(r.matrix, [[0, 18], [18, 0]])

    def test_detect_dma_connectivity_with_strings(self) -> None:
        for given in ("cuda", "CUDA"):
            with self.subTest(given=given):
                r = dmaconn.detect_dma_connectivity(given, "nvlink")
                self.assertEqual(r.device_type, "cuda")
                self.assertEqual(r.matrix, [[0, 18], [18, 0]])
        r = dmaconn.detect_dma_connectivity(StrOnly(), "nvlink")
        self.assertEqual(r.matrix, [[0, 18], [18, 0]])

    def test_builtin_cannot_be_replaced_or_removed(self) -> None:
        with self.assertRaises(dmaconn.DetectorExistsError):
            dmaconn.register_detector("cuda", "nvlink", lambda: [])
        with self.assertRaises(dmaconn.NoDetectorError):
            dmaconn.unregister_detector("cuda", "nvlink")
        self.assertEqual(dmaconn.detect("cuda", "nvlink").matrix, [[0, 18], [18, 0]])


class PythonDetectorTest(PythonDetectorCase):
    def test_matrix_only(self) -> None:
        conn = self.register(lambda: [[0, 2, 0], [2, 0, 1], [0, 1, 0]])
        r = dmaconn.detect("cuda", conn)
        self.assertEqual(r.device_type, "cuda")
        self.assertEqual(r.connection_type, conn)
        self.assertEqual(r.matrix, [[0, 2, 0], [2, 0, 1], [0, 1, 0]])
        self.assertEqual(r.devices, [{"ordinal": 0}, {"ordinal": 1}, {"ordinal": 2}])
        self.assertEqual(r.warnings, [])
        self.assertIn(("cuda", conn), dmaconn.list_detectors())

    def test_mapping_with_devices_and_warnings(self) -> None:
        conn = self.register(
            lambda: {
                "matrix": ((0, 4), (4, 0)),
                "devices": [{"name": "A", "uuid": "u-a", "ordinal": 7}, {"name": "B", "x": 3}],
                "warnings": ["first %s %d", "second"],
            }
        )
        r, warned = self.detect_recording("cuda", conn)
        self.assertEqual(r.matrix, [[0, 4], [4, 0]])
        self.assertEqual(
            r.devices, [{"ordinal": 0, "name": "A", "uuid": "u-a"}, {"ordinal": 1, "name": "B", "x": "3"}]
        )
        self.assertEqual(r.warnings, ["first %s %d", "second"])
        self.assertEqual(warned, ["first %s %d", "second"])

    def test_pairs(self) -> None:
        for pairs in (
            [{"from": 0, "to": 1, "path": "NV2", "read": "OK"}, {"from": 1, "to": 0, "path": 2}],
            {(0, 1): {"path": "NV2", "read": "OK"}, (1, 0): {"path": 2}},
        ):
            with self.subTest(pairs=pairs):
                conn = self.register(lambda pairs=pairs: {"matrix": [[0, 2], [2, 0]], "pairs": pairs})
                r = dmaconn.detect("cuda", conn)
                self.assertEqual(
                    r.pairs,
                    [{"from": 0, "to": 1, "path": "NV2", "read": "OK"}, {"from": 1, "to": 0, "path": "2"}],
                )
                self.assertEqual(r.pair(0, 1), {"path": "NV2", "read": "OK"})
                self.assertEqual(r.pair(1, 1), {})

    def test_invalid_pairs(self) -> None:
        for pairs, cause in (
            ([{"from": 0, "to": 0, "x": "y"}], (dmaconn.InvalidArgumentError, dmaconn.RangeError)),
            ([{"from": 0, "to": 2, "x": "y"}], dmaconn.RangeError),
            ([{"to": 1}], TypeError),
        ):
            with self.subTest(pairs=pairs):
                conn = self.register(lambda pairs=pairs: {"matrix": [[0, 1], [1, 0]], "pairs": pairs})
                with self.assertRaises(dmaconn.DetectorError) as ctx:
                    dmaconn.detect("cuda", conn)
                self.assertIsInstance(ctx.exception.__cause__, cause)

    def test_object_result(self) -> None:
        class Found:
            matrix = [[0, 1], [1, 0]]
            warnings = "only one"

        conn = self.register(Found)
        r, warned = self.detect_recording("cuda", conn)
        self.assertEqual(r.matrix, [[0, 1], [1, 0]])
        self.assertEqual(r.warnings, ["only one"])
        self.assertEqual(warned, ["only one"])

    def test_tolist_matrix(self) -> None:
        class Array:
            def tolist(self) -> List[List[int]]:
                return [[0, 3], [5, 0]]

        conn = self.register(Array)
        self.assertEqual(dmaconn.detect("cuda", conn).matrix, [[0, 3], [5, 0]])

    def test_empty_matrix(self) -> None:
        conn = self.register(lambda: [])
        r = dmaconn.detect("cuda", conn)
        self.assertEqual((r.matrix, r.devices), ([], []))

    def test_detect_dma_connectivity(self) -> None:
        conn = self.register(lambda: [[0, 4], [4, 0]])
        r = dmaconn.detect_dma_connectivity(DeviceType.CUDA, conn)
        self.assertIs(r.device_type, DeviceType.CUDA)
        self.assertEqual((r.connection_type, r.matrix), (conn, [[0, 4], [4, 0]]))
        r = dmaconn.detect_dma_connectivity("CUDA", conn)
        self.assertEqual(r.device_type, "cuda")

    def test_other_device_types(self) -> None:
        conn = self.register(lambda: [[0, 1], [1, 0]], device_type=DeviceType.HIP)
        self.assertIn(("rocm", conn), dmaconn.list_detectors())
        r = dmaconn.detect_dma_connectivity(DeviceType.HIP, conn)
        self.assertIs(r.device_type, DeviceType.HIP)
        self.assertEqual(dmaconn.detect("rocm", conn).device_type, "rocm")
        with self.assertRaises(dmaconn.NoDetectorError):
            dmaconn.detect("cuda", conn)

    def test_cache_fresh_and_clear(self) -> None:
        calls = []

        def fn() -> Any:
            calls.append(1)
            return {"matrix": [[0, len(calls)], [len(calls), 0]], "warnings": [f"run {len(calls)}"]}

        conn = self.register(fn)
        first, warned = self.detect_recording("cuda", conn)
        self.assertEqual((first.matrix[0][1], warned), (1, ["run 1"]))

        again, warned = self.detect_recording("cuda", conn)
        self.assertEqual(again, first)
        self.assertEqual(again.warnings, ["run 1"])  # the result keeps them
        self.assertEqual(warned, [])  # but a cached result does not warn again
        self.assertEqual(len(calls), 1)

        fresh, warned = self.detect_recording("cuda", conn, fresh=True)
        self.assertEqual((fresh.matrix[0][1], warned), (2, ["run 2"]))
        cached, warned = self.detect_recording("cuda", conn)
        self.assertEqual((cached.matrix[0][1], warned), (2, []))

        dmaconn.clear_cache()
        cleared, warned = self.detect_recording("cuda", conn)
        self.assertEqual((cleared.matrix[0][1], warned), (3, ["run 3"]))
        self.assertEqual(len(calls), 3)

    def test_shutdown_inside_detector(self) -> None:
        # The detection that runs the detector still uses what shutdown
        # would drop: refused, and nothing is dropped.
        outcome: List[Any] = []

        def shuts_down() -> Any:
            try:
                dmaconn.shutdown()
                outcome.append("shut down")
            except dmaconn.BusyError as exc:
                outcome.append(exc.code)
            return [[0, 1], [1, 0]]

        conn = self.register(shuts_down, "rocm")
        self.assertEqual(dmaconn.detect("rocm", conn).matrix, [[0, 1], [1, 0]])
        self.assertEqual(outcome, [-7])
        self.assertIn(("rocm", conn), dmaconn.list_detectors())
        self.assertEqual(dmaconn.detect("rocm", conn).matrix, [[0, 1], [1, 0]])
        self.assertEqual(outcome, [-7])  # cached: the detector ran once

    def test_register_twice(self) -> None:
        conn = self.register(lambda: [])
        with self.assertRaises(dmaconn.DetectorExistsError) as ctx:
            dmaconn.register_detector("cuda", conn, lambda: [[0]])
        self.assertEqual(ctx.exception.code, -4)
        self.assertIn("already registered", str(ctx.exception))
        self.assertEqual(dmaconn.detect("cuda", conn).matrix, [])

    def test_unregister(self) -> None:
        conn = unique_connection()
        dmaconn.register_detector("cuda", conn, lambda: [[0]])
        self.assertEqual(dmaconn.detect("cuda", conn).matrix, [[0]])
        dmaconn.unregister_detector("cuda", conn)
        self.assertNotIn(("cuda", conn), dmaconn.list_detectors())
        with self.assertRaises(dmaconn.NoDetectorError):
            dmaconn.detect("cuda", conn)
        with self.assertRaises(dmaconn.NoDetectorError):
            dmaconn.unregister_detector("cuda", conn)
        # The pair can be registered again, with a new detector and no old cache.
        dmaconn.register_detector("cuda", conn, lambda: [[0, 1], [1, 0]])
        try:
            self.assertEqual(dmaconn.detect("cuda", conn).matrix, [[0, 1], [1, 0]])
        finally:
            dmaconn.unregister_detector("cuda", conn)

    def test_not_callable(self) -> None:
        with self.assertRaises(TypeError):
            dmaconn.register_detector("cuda", unique_connection(), [[0]])  # type: ignore[arg-type]

    def test_exception_in_detector(self) -> None:
        def fn() -> Any:
            raise KeyError("no such GPU")

        conn = self.register(fn)
        with self.assertRaises(dmaconn.DetectorError) as ctx:
            dmaconn.detect("cuda", conn)
        err = ctx.exception
        self.assertEqual(err.code, -5)
        self.assertIn(f"detector for cuda over {conn} failed", str(err))
        self.assertIn("KeyError", str(err))
        self.assertIn("no such GPU", str(err))
        self.assertIsInstance(err.__cause__, KeyError)
        # Nothing was cached: the next call runs the detector again.
        with self.assertRaises(dmaconn.DetectorError):
            dmaconn.detect("cuda", conn)

    def test_failure_then_success(self) -> None:
        outcomes = [RuntimeError("flaky"), [[0, 1], [1, 0]]]

        def fn() -> Any:
            outcome = outcomes.pop(0)
            if isinstance(outcome, Exception):
                raise outcome
            return outcome

        conn = self.register(fn)
        with self.assertRaisesRegex(dmaconn.DetectorError, "flaky"):
            dmaconn.detect("cuda", conn)
        self.assertEqual(dmaconn.detect("cuda", conn).matrix, [[0, 1], [1, 0]])

    def test_invalid_results(self) -> None:
        cases = [
            ([[0, 1]], ValueError, "not square"),
            ([[0, 1], [1]], ValueError, "not square"),
            ([[1, 0], [0, 0]], ValueError, "diagonal"),
            ([[0, -1], [1, 0]], ValueError, "0 to"),
            ([[0, 2**31], [1, 0]], ValueError, "0 to"),
            ([[0, 1.5], [1, 0]], TypeError, "float"),
            ([[0, True], [1, 0]], TypeError, "bool"),
            ("[[0]]", TypeError, "list of lists"),
            (None, TypeError, "list of lists"),
            ({"devices": []}, ValueError, "'matrix'"),
            ({"matrix": [[0]], "devices": [{}, {}]}, ValueError, "device entries"),
            ({"matrix": [[0]], "devices": ["x"]}, TypeError, "not a mapping"),
        ]
        for output, exc_type, text in cases:
            with self.subTest(output=output):
                conn = self.register(lambda output=output: output)
                with self.assertRaises(dmaconn.DetectorError) as ctx:
                    dmaconn.detect("cuda", conn)
                self.assertIsInstance(ctx.exception.__cause__, exc_type)
                self.assertIn(text, str(ctx.exception))

    def test_detecting_own_pair_inside_detector(self) -> None:
        holder = {}

        def fn() -> Any:
            return dmaconn.detect("cuda", holder["conn"])

        holder["conn"] = conn = self.register(fn)
        with self.assertRaises(dmaconn.DetectorError) as ctx:
            dmaconn.detect("cuda", conn)
        self.assertIsInstance(ctx.exception.__cause__, dmaconn.BusyError)

    def test_detector_using_another_detector(self) -> None:
        inner = self.register(lambda: {"matrix": [[0, 6], [6, 0]], "warnings": ["inner"]})
        outer = self.register(
            lambda: {"matrix": dmaconn.detect("cuda", inner).matrix, "warnings": ["outer"]}
        )
        r, warned = self.detect_recording("cuda", outer)
        self.assertEqual(r.matrix, [[0, 6], [6, 0]])
        self.assertEqual(r.warnings, ["outer"])
        self.assertEqual(sorted(warned), ["inner", "outer"])

    def test_threads_share_one_detection(self) -> None:
        calls = []
        gate = threading.Event()

        def fn() -> Any:
            calls.append(threading.get_ident())
            gate.wait(5)
            return {"matrix": [[0, 1], [1, 0]], "warnings": ["once"]}

        conn = self.register(fn)
        results: List[Any] = []

        def worker() -> None:
            results.append(dmaconn.detect("cuda", conn).matrix)

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            threads = [threading.Thread(target=worker) for _ in range(8)]
            for t in threads:
                t.start()
            gate.set()
            for t in threads:
                t.join(10)
        self.assertEqual(results, [[[0, 1], [1, 0]]] * 8)
        self.assertEqual(len(calls), 1)
        self.assertEqual([str(w.message) for w in caught if w.category is dmaconn.DmaconnWarning], ["once"])


if __name__ == "__main__":
    unittest.main()
