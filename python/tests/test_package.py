# SPDX-License-Identifier: BSD-3-Clause
"""The package itself: a cheap import, lazy names, the dmaconn program."""

from __future__ import annotations

import os
import sys
import unittest

from _support import c_tool, child_env, run, run_python


class ImportTest(unittest.TestCase):
    def test_import_loads_nothing(self) -> None:
        # ctypes, the library and the binding's modules wait for first use:
        # importing the package adds the package and nothing else.
        proc = run_python(
            "import sys; before = set(sys.modules); import dmaconn;"
            " print(sorted(set(sys.modules) - before))",
            child_env(),
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode().strip(), "['dmaconn']")

    def test_lazy_names(self) -> None:
        code = (
            "import dmaconn\n"
            "assert 'detect' in dir(dmaconn) and 'Error' in dmaconn.__all__\n"
            "assert issubclass(dmaconn.NoDetectorError, dmaconn.Error)\n"
            "assert dmaconn.detect is dmaconn._core.detect\n"
            "try:\n    dmaconn.no_such_name\nexcept AttributeError as e:\n    print(e)\n"
            "from dmaconn import *\n"
            "print(version())\n"
        )
        proc = run_python(code, child_env())
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.decode().splitlines()
        self.assertEqual(lines[0], "module 'dmaconn' has no attribute 'no_such_name'")
        self.assertRegex(lines[1], r"^\d+\.\d+\.\d+$")


@unittest.skipIf(c_tool() is None, "the C tool is not built (set DMACONN_BUILD_DIR)")
class ProgramTest(unittest.TestCase):
    def test_python_m_runs_the_c_tool(self) -> None:
        from dmaconn import __main__

        self.assertEqual(os.path.realpath(__main__.program() or ""), os.path.realpath(c_tool() or ""))
        for args in (["--version"], ["--bogus"], ["--list", "--json"]):
            with self.subTest(args=args):
                py = run([sys.executable, "-m", "dmaconn", *args], child_env())
                c = run([c_tool() or "", *args], child_env())
                self.assertEqual((py.returncode, py.stdout, py.stderr), (c.returncode, c.stdout, c.stderr))

    def test_no_program(self) -> None:
        env = child_env(DMACONN_LIBRARY="/nonexistent/lib/libdmaconn.so.0")
        code = (
            "import sys, dmaconn.__main__ as m\n"
            "m._candidates = lambda: ['/nonexistent/bin/dmaconn']\n"
            "sys.exit(m.main(['--version']))\n"
        )
        proc = run_python(code, env)
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(proc.stdout, b"")
        self.assertIn(b"the dmaconn program is not installed", proc.stderr)


if __name__ == "__main__":
    unittest.main()
