# SPDX-License-Identifier: BSD-3-Clause
"""fork() while another thread makes the package's first call.

The child of fork() has only the forking thread: an import lock or the
library's load lock that another thread held at that moment stays held
there, and the child's first detect() would wait for it forever.  Each case
runs in its own interpreter, which forks while a second thread is held
inside the first call (in the import of dmaconn._core, or in loading the
library) until the fork begins; the child must finish detect().  The child's
alarm only detects a hang (it is far above what a detection takes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unittest

from _support import child_env, data, needs_replay

HANG_S = int(os.environ.get("DMACONN_TEST_HANG_S", "60"))

_FORK_DURING_FIRST_CALL = r"""
import json, os, signal, sys, threading
import dmaconn

where, hang_s = sys.argv[1], int(sys.argv[2])
inside, forking = threading.Event(), threading.Event()
# Registered last, so it runs first when fork() begins: the other thread
# is let go only then (and fork() may wait for it).
os.register_at_fork(before=forking.set)

def hold():
    inside.set()
    forking.wait(hang_s)

if where == "import":
    class Gate:
        def find_spec(self, name, path=None, target=None):
            if name == "dmaconn._core":
                hold()  # the import lock of dmaconn._core is held here
            return None
    sys.meta_path.insert(0, Gate())
else:
    from dmaconn import _core, _library  # imported here; the load is what is held
    _library._on_load.insert(0, lambda lib: hold())

thread = threading.Thread(target=lambda: dmaconn.detect("cuda", "nvlink"))
thread.start()
inside.wait(hang_s)
pid = os.fork()
if pid == 0:
    signal.alarm(hang_s)  # a hang ends in SIGALRM
    try:
        matrix = dmaconn.detect("cuda", "nvlink").matrix
        os._exit(0 if matrix else 3)
    except BaseException:
        os._exit(4)
thread.join()
_, status = os.waitpid(pid, 0)
print(json.dumps({"exit": os.waitstatus_to_exitcode(status)}))
"""


@needs_replay
class ForkTest(unittest.TestCase):
    def fork_during_first_call(self, where: str) -> None:
        proc = subprocess.run(
            [sys.executable, "-c", _FORK_DURING_FIRST_CALL, where, str(HANG_S)],
            env=child_env(data("switch2.json")),
            capture_output=True,
            timeout=4 * HANG_S,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        out = json.loads(proc.stdout)
        # -14: the child hung and its alarm ended it.
        self.assertEqual(out["exit"], 0, f"the child of fork() did not finish detect(): {out}")

    def test_fork_while_another_thread_imports(self) -> None:
        self.fork_during_first_call("import")

    def test_fork_while_another_thread_loads_the_library(self) -> None:
        self.fork_during_first_call("load")


if __name__ == "__main__":
    unittest.main()
