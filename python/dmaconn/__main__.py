# SPDX-License-Identifier: BSD-3-Clause
"""``python3 -m dmaconn`` and the ``dmaconn`` console script: the C tool.

Both run the dmaconn program that ships with this package (or that was
built or installed beside the library it loads), so every option, output
and exit status is the C tool's own.
"""

import os
import sys


def _candidates():
    """Where the dmaconn program may be, in order."""
    from . import _library  # no ctypes loading: only paths

    here = os.path.dirname(os.path.abspath(__file__))
    found = [os.path.join(here, "bin", "dmaconn")]  # a wheel
    lib_dirs = []
    override = os.environ.get(_library.ENV_LIBRARY)
    if override and os.path.isabs(override):
        lib_dirs.append(os.path.dirname(override))
    lib_dirs += [os.path.dirname(path) for path in _library.candidates()]
    for d in lib_dirs:
        # A build directory holds both; an installation prefix has bin/ beside lib/.
        found += [os.path.join(d, "dmaconn"), os.path.join(os.path.dirname(d), "bin", "dmaconn")]
    return found


def _is_program(path):
    """Whether path is an executable ELF file: the C program, never a script
    such as this package's own console script (``<prefix>/bin/dmaconn`` beside
    ``<prefix>/lib``), which would run itself again and again."""
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return False
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def program():
    """The dmaconn program's path, or None."""
    for path in _candidates():
        if _is_program(path):
            return path
    return None


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    path = program()
    if path is None:
        here = os.path.dirname(os.path.abspath(__file__))
        sys.stderr.write(
            "dmaconn: the dmaconn program is not installed with this package (no %s: a build "
            "without Jansson?); reinstall the package, or install the dmaconn tool\n"
            % os.path.join(here, "bin", "dmaconn")
        )
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(path, [path, *args])
    except OSError as e:
        # A damaged or foreign file (ENOEXEC), a missing interpreter: as a
        # shell says it, with the shell's status for "cannot execute".
        sys.stderr.write("dmaconn: cannot run %s: %s; reinstall the package\n"
                         % (path, e.strerror or e))
        return 126
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main())
