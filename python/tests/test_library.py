# SPDX-License-Identifier: BSD-3-Clause
"""Finding the shared library, and failing clearly when it is not there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from _support import PYTHON_DIR, c_tool, child_env, data, run, run_python

import dmaconn

REPORT = (
    "import dmaconn\n"
    "try:\n"
    "    dmaconn.detect('cuda', 'nvlink')\n"
    "except dmaconn.LibraryNotFoundError as e:\n"
    "    assert isinstance(e, ImportError) and isinstance(e, dmaconn.Error), type(e).__mro__\n"
    "    print(e)\n"
    "else:\n"
    "    print('LOADED', dmaconn.library_path())\n"
)


class LibraryNotFoundTest(unittest.TestCase):
    def test_nonexistent_override(self) -> None:
        proc = run_python(REPORT, child_env(DMACONN_LIBRARY="/nonexistent/libdmaconn.so.0"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = proc.stdout.decode()
        self.assertIn("cannot load /nonexistent/libdmaconn.so.0 (from DMACONN_LIBRARY)", out)

    def test_relative_override(self) -> None:
        proc = run_python(REPORT, child_env(DMACONN_LIBRARY="libdmaconn.so.0"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("DMACONN_LIBRARY must be an absolute path", proc.stdout.decode())

    def test_import_works_without_library(self) -> None:
        code = "import dmaconn; print(dmaconn.__version__, dmaconn.NoDetectorError.code)"
        proc = run_python(code, child_env(DMACONN_LIBRARY="/nonexistent/libdmaconn.so.0"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode(), f"{dmaconn.__version__} -2\n")

    def test_cli_is_the_c_program(self) -> None:
        # `python3 -m dmaconn` runs the C tool, which carries its own library:
        # found beside the library DMACONN_LIBRARY names, even where that
        # library cannot be loaded (whatever the build directory is called).
        tool = c_tool()
        if tool is None:
            self.skipTest("the dmaconn program is not built")
        missing = os.path.join(os.path.dirname(tool), "libdmaconn-missing.so.0")
        env = child_env(DMACONN_LIBRARY=missing)
        proc = run([sys.executable, "-m", "dmaconn", "--version"], env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout.decode(), r"^dmaconn \d+\.\d+\.\d+\n$")

    def test_search_lists_where_it_looked(self) -> None:
        # A copy of the package with no library beside it, no build directory
        # above it and a loader path that leads nowhere.
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(PYTHON_DIR / "dmaconn", os.path.join(tmp, "dmaconn"),
                            ignore=shutil.ignore_patterns("__pycache__", "*.so*"))
            env = child_env(DMACONN_LIBRARY=None, LD_LIBRARY_PATH=None)
            env["PYTHONPATH"] = tmp
            proc = run_python(REPORT, env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = proc.stdout.decode()
        if out.startswith("LOADED"):
            self.skipTest(f"a dmaconn library is installed system-wide: {out.strip()}")
        self.assertIn("cannot find the dmaconn shared library libdmaconn.so.0", out)
        self.assertIn(os.path.join(tmp, "dmaconn", "libdmaconn.so.0") + " (absent)", out)
        self.assertIn("through the system loader", out)


def _needs_missing(tmp: str, name: str, soname: str) -> str:
    """tmp/lib/name, a library (soname) that needs libdctest-missing.so.4,
    which is not there (linked against a copy then removed)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise unittest.SkipTest("no C compiler here")
    dep_dir, lib_dir = os.path.join(tmp, "dep"), os.path.join(tmp, "lib")
    os.makedirs(dep_dir, exist_ok=True)
    os.makedirs(lib_dir, exist_ok=True)
    with open(os.path.join(tmp, "dep.c"), "w") as f:
        f.write("int dc_test_missing(void) { return 1; }\n")
    with open(os.path.join(tmp, "lib.c"), "w") as f:
        f.write("extern int dc_test_missing(void);\n"
                "int dc_test_needs(void) { return dc_test_missing(); }\n")
    dep = os.path.join(dep_dir, "libdctest-missing.so.4")
    subprocess.run([cc, "-shared", "-fPIC", "-Wl,-soname,libdctest-missing.so.4", os.path.join(tmp, "dep.c"),
                    "-o", dep], check=True)
    out = os.path.join(lib_dir, name)
    subprocess.run([cc, "-shared", "-fPIC", f"-Wl,-soname,{soname}", os.path.join(tmp, "lib.c"), dep,
                    "-o", out], check=True)
    os.unlink(dep)
    return out


class MissingDependencyTest(unittest.TestCase):
    """A library that is there but needs one that is not: the error names the
    missing one (libjansson.so.4 where Jansson is not installed)."""

    def test_replay_component(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            replay = _needs_missing(tmp, "libdmaconn_replay.so.0", "libdmaconn_replay.so.0")
            library = os.path.join(os.path.dirname(replay), "libdmaconn.so.0")
            shutil.copy(dmaconn.library_path(), library)
            code = (
                "import dmaconn\n"
                "try:\n"
                "    dmaconn.detect('cuda', 'nvlink')\n"
                "except dmaconn.ReplayError as e:\n"
                "    print(e)\n"
            )
            env = child_env(data("switch2.json"), DMACONN_LIBRARY=library, DMACONN_REPLAY_LIBRARY=None,
                            LD_LIBRARY_PATH=None)
            proc = run_python(code, env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        if not proc.stdout:
            self.skipTest("a replay component is installed where the system loader finds it")
        message = proc.stdout.decode()
        self.assertIn("libdctest-missing.so.4: cannot open shared object file", message)
        self.assertNotIn("libdmaconn_replay.so.0: cannot open shared object file", message)
        self.assertIn(replay, message)  # which copy needs it

    def test_library(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(PYTHON_DIR / "dmaconn", os.path.join(tmp, "dmaconn"),
                            ignore=shutil.ignore_patterns("__pycache__", "*.so*"))
            library = _needs_missing(os.path.join(tmp, "dmaconn"), "libdmaconn.so.0", "libdmaconn.so.0")
            env = child_env(DMACONN_LIBRARY=None, LD_LIBRARY_PATH=None)
            env["PYTHONPATH"] = tmp
            proc = run_python(REPORT, env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        first = proc.stdout.decode().splitlines()[0]  # the headline, before the list of places tried
        self.assertIn(
            f"{library} cannot be loaded: libdctest-missing.so.4: cannot open shared object file", first
        )

class LibraryFoundTest(unittest.TestCase):
    def test_beside_the_package(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            pkg = os.path.join(tmp, "dmaconn")
            shutil.copytree(PYTHON_DIR / "dmaconn", pkg, ignore=shutil.ignore_patterns("__pycache__"))
            shutil.copy(dmaconn.library_path(), os.path.join(pkg, "libdmaconn.so.0"))
            env = child_env(DMACONN_LIBRARY=None)
            env["PYTHONPATH"] = tmp
            proc = run_python(REPORT, env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode(), f"LOADED {os.path.join(pkg, 'libdmaconn.so.0')}\n")

    def test_system_loader(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(PYTHON_DIR / "dmaconn", os.path.join(tmp, "dmaconn"),
                            ignore=shutil.ignore_patterns("__pycache__", "*.so*"))
            env = child_env(DMACONN_LIBRARY=None, LD_LIBRARY_PATH=os.path.dirname(dmaconn.library_path()))
            env["PYTHONPATH"] = tmp
            proc = run_python(REPORT, env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(proc.stdout.decode().startswith("LOADED "), proc.stdout)


if __name__ == "__main__":
    unittest.main()
