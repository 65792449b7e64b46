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
- Every variable the C sources read (secure_getenv(), dc_getenv() and the
  configuration's readers, by name) and every DMACONN_* variable the Python
  package reads is documented: the C ones in the ENVIRONMENT section of the
  man pages (man/dmaconn.txt) and in README.md's Environment table, the
  Python ones in python/README.md.
- Lists every dlopen() call with its first argument, for review.

Prints "FAIL ..." per finding and "N passed, M failed"; exits 1 on a
finding.  Python 3 standard library only.
"""
import os
import re
import sys

from harness import Report

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


# Functions that read the variable named by their first argument.
READERS = r"(?:secure_getenv|dc_getenv|config_string|config_flag|dc_library_override|dc_config_variable)"


def c_variables():
    """{name: first file:line} of the variables the C sources read by name."""
    found = {}
    for path in sources():
        rel = os.path.relpath(path, REPO)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = strip_comments(f.read())
        for m in re.finditer(READERS + r"\s*\(\s*\"([A-Z][A-Z0-9_]*)\"", text):
            found.setdefault(m.group(1), "%s:%d" % (rel, text.count("\n", 0, m.start()) + 1))
    # The backends' library overrides, read through their descriptors' rows.
    for name, where in library_overrides().items():
        found.setdefault(name, where)
    return found


def library_overrides():
    """{name: file:line} of the override variables of the backends' library
    rows (struct dc_library: name, soname, override, ...)."""
    found = {}
    for path in sources():
        rel = os.path.relpath(path, REPO)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = strip_comments(f.read())
        for rows in re.finditer(r"struct dc_library \w+\[\]\s*=\s*\{(.*?)\};", text, re.S):
            for m in re.finditer(r"\{\s*\"\w+\",\s*[^,]+,\s*\"(DMACONN_\w+_LIBRARY)\"", rows.group(1)):
                found.setdefault(m.group(1), "%s:%d" % (rel, text.count("\n", 0, rows.start(1) + m.start()) + 1))
    return found


def python_variables():
    """{name: file} of the DMACONN_* names the Python package spells."""
    found = {}
    root = os.path.join(REPO, "python", "dmaconn")
    for d, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith(".py"):
                with open(os.path.join(d, f), encoding="utf-8") as fh:
                    for name in re.findall(r"[\"'](DMACONN_[A-Z0-9_]+)[\"']", fh.read()):
                        found.setdefault(name, os.path.relpath(os.path.join(d, f), REPO))
    return found


def documented():
    """(names in the man pages' ENVIRONMENT block, names in README's Environment section, python/README.md)."""
    with open(os.path.join(REPO, "man", "dmaconn.txt"), encoding="utf-8") as f:
        man = f.read()
    block = man[man.index("== ENVIRONMENT"):]
    block = block[:block.index("\n= ")]
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    table = readme[readme.index("\n## Environment"):]
    table = table[:table.index("\n## ", 1)]
    man_names = set(re.findall(r"^- (.*)$", block, re.M))
    man_names = set(re.findall(r"\*([A-Z][A-Z0-9_]*)\*", "\n".join(man_names)))
    with open(os.path.join(REPO, "python", "README.md"), encoding="utf-8") as f:
        python_readme = f.read()
    return man_names, set(re.findall(r"`([A-Z][A-Z0-9_]*)`", table)), python_readme


def audit_documented():
    """A Report of the check that every variable read is documented."""
    report = Report()
    man_names, readme_names, python_readme = documented()
    for name, where in sorted(c_variables().items()):
        missing = [doc for doc, names in (("man/dmaconn.txt ENVIRONMENT", man_names),
                                          ("README.md Environment", readme_names)) if name not in names]
        report.check(not missing, "%s: %s is documented" % (where, name),
                     "read but not documented in " + " or ".join(missing))
    for name, where in sorted(python_variables().items()):
        report.check(re.search(r"`%s[`=]" % name, python_readme), "%s: %s is documented" % (where, name),
                     "read but not documented in python/README.md")
    return report


def main():
    report = audit_documented()
    overrides = {}
    dlopens = []
    for path in sources():
        rel = os.path.relpath(path, REPO)
        with open(path, encoding="utf-8", errors="replace") as f:
            raw = f.read()
        text = strip_comments(raw)
        for m in re.finditer(r"(?<![\w.>])getenv\s*\(", text):
            line = text.count("\n", 0, m.start()) + 1
            report.check(False, "%s:%d: secure_getenv()" % (rel, line), "getenv() where secure_getenv() is needed")
        for m in re.finditer(r"secure_getenv\s*\(\s*\"(DMACONN_\w+_(?:LIBRARY|HELPER))\"", text):
            overrides.setdefault(m.group(1), set()).add(rel)
            # Refused with a message, or used only when absolute.
            absolute_only = re.search(r"\[0\]\s*[!=]=\s*'/'", text[m.end():m.end() + 300])
            line = text.count("\n", 0, m.start()) + 1
            report.check("%s must be an absolute path" % m.group(1) in raw or absolute_only,
                         "%s:%d: %s refuses relative paths" % (rel, line, m.group(1)),
                         "no \"%s must be an absolute path\"" % m.group(1))
        for m in re.finditer(r"\bdlopen\s*\(\s*([^,]+),", text):
            line = text.count("\n", 0, m.start()) + 1
            dlopens.append("%s:%d: dlopen(%s, ...)" % (rel, line, m.group(1).strip()))
    # Those the core reads (dc_library_override) refuse relative paths there.
    with open(os.path.join(REPO, "src", "env.c"), encoding="utf-8") as f:
        env_c = f.read()
    rows = library_overrides()
    report.check(len(rows) >= 4 and "%s must be an absolute path" in env_c,
                 "the backends' library overrides (%s) refuse relative paths (src/env.c)" % ", ".join(sorted(rows)))
    for name, where in rows.items():
        overrides.setdefault(name, set()).add(where.split(":")[0] + " (row; src/env.c)")
    if not report.failures:
        report.check(True, "no plain getenv() in %s" % ", ".join(d + "/" for d in DIRS))
    for name, files in sorted(overrides.items()):
        print("  %s: relative paths refused (%s)" % (name, ", ".join(sorted(files))))
    print("dlopen calls (soname macros, or paths checked absolute / built from dladdr):")
    for d in dlopens:
        print("  " + d)
    return report.done()


if __name__ == "__main__":
    sys.exit(main())
