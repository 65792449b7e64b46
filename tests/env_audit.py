#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Audits how dmaconn reads its environment (SECURITY.md, "Environment").

usage: env_audit.py

- Every read of the environment in src/, replay/ and tools/ goes through
  secure_getenv(), which returns NULL in set-user-ID and set-group-ID
  programs (and other secure-execution cases): a plain getenv() fails the
  audit.
- Every variable named DMACONN_*_LIBRARY or DMACONN_*_HELPER (an override
  naming code to load or run) is used only when it is an absolute path: the
  file that reads it says "<NAME> must be an absolute path", or the read is
  followed by a test of its first character against '/'.
- Lists every dlopen() call with its first argument, for review.

Prints "FAIL ..." per finding and "N passed, M failed"; exits 1 on a
finding.  Python 3 standard library only.
"""
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIRS = ("src", "replay", "tools")


def sources():
    for d in DIRS:
        for root, _, files in os.walk(os.path.join(REPO, d)):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.join(root, f)


def strip_comments(text):
    # Keeps line numbers: comments become blanks of the same shape.
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"/\*.*?\*/|//[^\n]*", blank, text, flags=re.S)


def main():
    passed = failed = 0
    overrides = {}
    dlopens = []
    for path in sources():
        rel = os.path.relpath(path, REPO)
        with open(path, encoding="utf-8", errors="replace") as f:
            raw = f.read()
        text = strip_comments(raw)
        for m in re.finditer(r"(?<![\w.>])getenv\s*\(", text):
            line = text.count("\n", 0, m.start()) + 1
            print("FAIL %s:%d: getenv() where secure_getenv() is needed" % (rel, line))
            failed += 1
        for m in re.finditer(r"secure_getenv\s*\(\s*\"(DMACONN_\w+_(?:LIBRARY|HELPER))\"", text):
            overrides.setdefault(m.group(1), set()).add(rel)
            # Refused with a message, or used only when absolute.
            absolute_only = re.search(r"\[0\]\s*[!=]=\s*'/'", text[m.end():m.end() + 300])
            if "%s must be an absolute path" % m.group(1) not in raw and not absolute_only:
                line = text.count("\n", 0, m.start()) + 1
                print("FAIL %s:%d: %s is read but relative paths are not refused "
                      "(no \"%s must be an absolute path\")" % (rel, line, m.group(1), m.group(1)))
                failed += 1
            else:
                passed += 1
        for m in re.finditer(r"\bdlopen\s*\(\s*([^,]+),", text):
            line = text.count("\n", 0, m.start()) + 1
            dlopens.append("%s:%d: dlopen(%s, ...)" % (rel, line, m.group(1).strip()))
    if not failed:
        passed += 1
        print("ok no plain getenv() in %s" % ", ".join(d + "/" for d in DIRS))
    for name, files in sorted(overrides.items()):
        print("ok %s: relative paths refused (%s)" % (name, ", ".join(sorted(files))))
    print("dlopen calls (soname macros, or paths checked absolute / built from dladdr):")
    for d in dlopens:
        print("  " + d)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
