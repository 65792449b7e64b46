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


def program():
    """The dmaconn program's path, or None."""
    for path in _candidates():
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    path = program()
    if path is None:
        sys.stderr.write(
            "dmaconn: the dmaconn program is not installed with this package; looked for:\n  "
            + "\n  ".join(_candidates())
            + "\n"
        )
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, [path, *args])
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main())
