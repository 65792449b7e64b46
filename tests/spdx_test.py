#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every source file of the project says its licence in its first lines:
"SPDX-License-Identifier: BSD-3-Clause" (LICENSE holds the text).

Source files: C and C++ sources and headers, Python, shell, CMake files and
templates, Makefile, TOML, systemd units, NHC checks, the man pages' source,
fuzzing dictionaries, .clang-format and whatever starts with "#!".  Data (replays, expected outputs, fuzz corpora, JSON, Markdown) is left
alone: most of those formats have no comments.  The files are git's tracked
files in a checkout, else every file under the source root but build*/.

Usage: spdx_test.py [SOURCE_DIR]"""

import os
import subprocess
import sys

from harness import finish

TAG = "SPDX-License-Identifier: BSD-3-Clause"
SUFFIXES = (".c", ".h", ".cpp", ".py", ".sh", ".bash", ".cmake", ".in", ".toml", ".service", ".timer",
            ".nhc")
NAMES = ("CMakeLists.txt", "Makefile", ".clang-format")
# Sources whose suffix also names data elsewhere: the man pages' one source,
# fuzzing dictionaries.
SOURCE_GLOBS = (("man/", ".txt"), ("fuzz/", ".dict"))
DATA_DIRS = ("fuzz/corpus/", "tests/sysfs", "tests/cli/", "tests/dot/")
HEAD_LINES = 5


def tracked(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, check=True).stdout
        return [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, files in os.walk(root):
            rel = os.path.relpath(d, root)
            dirs[:] = [x for x in dirs if not (rel == "." and (x.startswith("build") or x.startswith(".")))]
            found += [os.path.normpath(os.path.join(rel, f)) for f in files]
        return found


def is_source(root, rel):
    if rel.startswith(DATA_DIRS):
        return False
    name = os.path.basename(rel)
    if name in NAMES or name.endswith(SUFFIXES):
        return True
    if any(rel.startswith(d) and rel.endswith(x) for d, x in SOURCE_GLOBS):
        return True
    try:
        with open(os.path.join(root, rel), "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    files = [p for p in tracked(root) if is_source(root, p)]
    missing = []
    for rel in files:
        try:
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                head = [next(f, "") for _ in range(HEAD_LINES)]
        except OSError:
            continue  # deleted in the work tree, not yet in git
        if not any(TAG in line for line in head):
            missing.append(rel)
    problems = ["%s: no '%s' in its first %d lines" % (rel, TAG, HEAD_LINES) for rel in missing]
    if len(files) < 100:
        problems.append("only %d source files found under %s" % (len(files), root))
    return finish(problems, "%d source files checked for %s" % (len(files), TAG))


if __name__ == "__main__":
    sys.exit(main())
