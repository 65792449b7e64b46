#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every Level Zero function of ze_functions.h has an argument shape.

The replay's prologues and its recorder's wrappers are generated from each
row's shape, so a row without one, or with a shape the table does not
document, must stop the build.  A copy of the header with one row added
(zeInit's, renamed) is compiled three ways: with zeInit's shape (builds),
without a shape and with an unknown one (both must fail, for that reason).

Usage: ze_shape_test.py CC SOURCE_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

CC, SRC = sys.argv[1], sys.argv[2]
HEADER = os.path.join(SRC, "src", "backends", "level_zero", "ze_functions.h")
PARAMS = os.path.join(SRC, "src", "backends", "params.h")
UNIT = '#include "ze_functions.h"\nint main(void) { return 0; }\n'


def compile_with(row_of):
    """Compiles a unit including the header with row_of(zeInit's row) added."""
    text = open(HEADER).read()
    m = re.search(r"^\s*\w*\(\s*(?:X,\s*)?zeInit,.*\\\n", text, re.M)
    if not m:
        sys.exit("FAIL: no zeInit row in %s" % HEADER)
    row = row_of(m.group(0).replace("zeInit", "zeDeviceGetStatus"))
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "level_zero"))
        shutil.copy(PARAMS, tmp)
        with open(os.path.join(tmp, "level_zero", "ze_functions.h"), "w") as f:
            f.write(text[:m.end()] + row + text[m.end():])
        with open(os.path.join(tmp, "unit.c"), "w") as f:
            f.write(UNIT)
        r = subprocess.run([CC, "-std=c11", "-fsyntax-only", "-I", os.path.join(tmp, "level_zero"),
                            os.path.join(tmp, "unit.c")], capture_output=True, text=True)
        return r.returncode, r.stderr


def without_shape(row):
    # The row's last column dropped: (..., required, SHAPE) -> (..., required).
    return re.sub(r",\s*[A-Z_]+\)(\s*\\\n)$", r")\1", row)


def must_fail(what, row_of, reason):
    """1 unless the row that row_of makes stops the build, for reason."""
    rc, err = compile_with(row_of)
    if rc == 0:
        print("FAIL: a Level Zero function %s compiles" % what)
        return 1
    if reason not in err:
        print("FAIL: a row %s fails for another reason:\n%s" % (what, err))
        return 1
    return 0


failures = 0
rc, err = compile_with(lambda row: row)
if rc:
    print("FAIL: a row with a documented shape does not compile:\n" + err)
    failures += 1
failures += must_fail("without a shape", without_shape, "argument")
failures += must_fail("of an unknown shape", lambda row: re.sub(r"\bINIT\)", "NO_SUCH_SHAPE)", row),
                      "ZE_SHAPE_NO_SUCH_SHAPE")
print("ze_shape: %s" % ("FAIL" if failures else "ok"))
sys.exit(1 if failures else 0)
