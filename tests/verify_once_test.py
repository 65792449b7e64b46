#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A verification has one form, the dmaconn_result of dmaconn_verify_run():
dmaconn_verify()'s result holds nothing but that result, its accessors read
it (through the public result accessors), the cuda/verified view reads it,
and Python calls dmaconn_verify_run() and none of the older functions.

    verify_once_test.py [REPO]
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Report  # noqa: E402

# The older API, kept for existing C callers.
ACCESSORS = ("dmaconn_verify_result_free", "dmaconn_verify_size", "dmaconn_verify_status_of",
             "dmaconn_verify_pair_get", "dmaconn_verify_pair_property_count",
             "dmaconn_verify_pair_property_key", "dmaconn_verify_pair_property_value",
             "dmaconn_verify_warning_count", "dmaconn_verify_warning")


def body(text, name):
    """The body of C function name defined in text, or None."""
    m = re.search(r"^[a-z][^;{}()]*\b%s\(([^)]*)\)\s*\{" % re.escape(name), text, re.M)
    if not m:
        return None
    depth, at = 1, m.end()
    while depth and at < len(text):
        depth += {"{": 1, "}": -1}.get(text[at], 0)
        at += 1
    return text[m.end():at - 1]


def main():
    repo = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else \
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    report = Report()
    with open(os.path.join(repo, "src/verify.c")) as f:
        verify = f.read()

    m = re.search(r"struct dmaconn_verify_result \{([^}]*)\};", verify)
    members = [line.strip() for line in (m.group(1) if m else "").split(";") if line.strip()]
    report.equal("struct dmaconn_verify_result holds the result alone", members, ["dmaconn_result *r"])

    for name in ACCESSORS:
        b = body(verify, name)
        if not report.check(b is not None, name + " is defined in src/verify.c"):
            continue
        report.check(re.search(r"\bdmaconn_result_\w+\(|\bdc_verify_status\(", b) and "->status" not in b
                     and "->pairs" not in b and "->warnings" not in b,
                     name + " reads dmaconn_verify_run()'s result", b.strip())
    b = body(verify, "dmaconn_verify") or ""
    report.check("dmaconn_verify_run(" in b, "dmaconn_verify() is dmaconn_verify_run() kept", b.strip())

    # The verdict's view and the CLI read the result; nothing else in the
    # product calls the older functions.
    product = [p for pattern in ("src/**/*.[ch]", "tools/*.[ch]", "replay/*.[ch]", "python/dmaconn/*.py")
               for p in glob.glob(os.path.join(repo, pattern), recursive=True)]
    users = []
    for path in sorted(product):
        rel = os.path.relpath(path, repo)
        if rel == "src/verify.c":
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for name in ACCESSORS + ("dmaconn_verify(",):
            # A call of dmaconn_verify() has arguments; comments name it "dmaconn_verify()".
            pattern = r"\bdmaconn_verify\((?!\))" if name.endswith("(") else r"\b%s\b" % re.escape(name)
            if re.search(pattern, text):
                users.append("%s: %s" % (rel, name.rstrip("(")))
    report.problems("no product file but src/verify.c uses the older verify functions", users)

    with open(os.path.join(repo, "python/dmaconn/_core.py")) as f:
        core = f.read()
    report.check("lib.dmaconn_verify_run(" in core, "Python's verify() calls dmaconn_verify_run()")
    return report.done()


if __name__ == "__main__":
    sys.exit(main())
