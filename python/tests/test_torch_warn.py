# SPDX-License-Identifier: BSD-3-Clause
"""dmaconn.torch's one warn-once helper (_shim.warn_once), which both of its
warnings go through: "nothing registered" (dmaconn/torch/__init__.py) and the
unsafe shim cache (_shim.py).  Each kind is said once per process, a kind
given never silences another, and the warning points at the caller's caller
as warnings.warn would with the same stacklevel."""

from __future__ import annotations

import importlib.util
import inspect
import unittest
import warnings

from _support import PYTHON_DIR


def _fresh_shim():
    """_shim.py loaded on its own, with nothing warned yet."""
    path = PYTHON_DIR / "dmaconn" / "torch" / "_shim.py"
    spec = importlib.util.spec_from_file_location("dmaconn_torch_shim_warn", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _caller(shim, kind, message):
    shim.warn_once(kind, message, stacklevel=2)  # as warnings.warn(..., stacklevel=2) here would


class WarnOnceTest(unittest.TestCase):
    def test_each_kind_once(self):
        shim = _fresh_shim()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(3):
                _caller(shim, "nothing registered", "first")
                _caller(shim, "unsafe cache", "second")
        self.assertEqual([str(w.message) for w in caught], ["first", "second"])

    def test_points_at_the_callers_caller(self):
        shim = _fresh_shim()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            line = inspect.currentframe().f_lineno + 1
            _caller(shim, "k", "text")
        self.assertEqual([(w.filename, w.lineno) for w in caught], [(__file__, line)])

if __name__ == "__main__":
    unittest.main()
