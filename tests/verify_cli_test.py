# SPDX-License-Identifier: BSD-3-Clause
"""dmaconn --verify as a person at a terminal sees it, and when it is stopped.

  verify_cli_test.py DMACONN HELPER FAKE_LIBCUDA WORKDIR

Progress: on a terminal, standard error shows the pairs done out of the
total while the helper runs; never with --json or -q, never on standard
output, never when standard error is not a terminal.

Stopping: SIGTERM or SIGINT to dmaconn while the helper hangs ends the
helper and whatever it started (the fake driver's FAKE_CUDA_GRANDCHILD).
This process adopts the orphans (PR_SET_CHILD_SUBREAPER) to see them die.
"""
import ctypes
import os
import pty
import signal
import subprocess
import sys
import time

from harness import Report

DMACONN, HELPER, FAKE, WORK = sys.argv[1:5]
report = Report()


def check(name, ok, detail=""):
    report.check(ok, name, detail)


def env(**extra):
    e = dict(os.environ)
    e.update(DMACONN_VERIFY_HELPER=HELPER, DMACONN_CUDA_LIBRARY=FAKE, DMACONN_NO_CACHE="1",
             DMACONN_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1",
             DMACONN_SYSFS_ROOT=os.path.join(WORK, "none"), DMACONN_CACHE_DIR=os.path.join(WORK, "cache"))
    for k in ("DMACONN_QUIET", "DMACONN_REPLAY", "CUDA_VISIBLE_DEVICES"):
        e.pop(k, None)
    e.update(extra)
    return e


def run_on_tty(args, **extra):
    """(exit status, stdout, what the terminal on stderr received)"""
    master, slave = pty.openpty()
    p = subprocess.Popen([DMACONN] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=slave, env=env(**extra))
    os.close(slave)
    out = p.stdout.read()
    p.wait()
    tty = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        tty += chunk
    os.close(master)
    return p.returncode, out.decode(), tty.decode(errors="replace")


os.makedirs(WORK, exist_ok=True)

# Three GPUs: six pairs, counted up to 6/6, then the line is erased.
rc, out, tty = run_on_tty(["--verify"], FAKE_CUDA_DEVICES="3")
check("progress-status", rc == 0, str(rc))
check("progress-final", "6/6 pairs" in tty, repr(tty))
check("progress-first", "0/6 pairs" in tty, repr(tty))
check("progress-erased", tty.endswith("\r\x1b[K"), repr(tty[-40:]))
check("progress-not-stdout", "pairs" not in out and "\r" not in out, repr(out))
check("result-stdout", "cuda verify: 3 devices" in out, repr(out))

# -c verified runs the helper too.
rc, out, tty = run_on_tty(["-d", "cuda", "-c", "verified"], FAKE_CUDA_DEVICES="2")
check("verified-progress", "2/2 pairs" in tty, repr(tty))

# Never with --json or -q, nor when standard error is not a terminal.
for args in (["--verify", "--json"], ["--verify", "-q"], ["-d", "cuda", "-c", "verified", "--json"]):
    rc, out, tty = run_on_tty(args, FAKE_CUDA_DEVICES="2")
    check("quiet-" + " ".join(args), "pairs" not in tty and "pairs" not in out.replace('"pairs"', ""),
          repr(tty))
# --record FILE --verify shows it too; DMACONN_QUIET=1 and --format json
# (which is --json) do not.
rc, out, tty = run_on_tty(["--record", os.path.join(WORK, "rec.json"), "--verify"], FAKE_CUDA_DEVICES="2")
check("record-progress", rc == 0 and "2/2 pairs" in tty and "\r\x1b[Kdmaconn: recorded" in tty, repr(tty))
for args, extra in ((["--verify"], {"DMACONN_QUIET": "1"}), (["--verify", "--format", "json"], {}),
                    (["--record", os.path.join(WORK, "rec.json"), "--verify", "-q"], {})):
    rc, out, tty = run_on_tty(args, FAKE_CUDA_DEVICES="2", **extra)
    check("quiet-" + " ".join(args + ["%s=%s" % kv for kv in extra.items()]), rc == 0 and "pairs" not in tty,
          repr(tty))
p = subprocess.run([DMACONN, "--verify"], capture_output=True, env=env(FAKE_CUDA_DEVICES="2"))
check("no-tty", b"pairs" not in p.stderr and b"\r" not in p.stderr, repr(p.stderr))

# Stopping dmaconn stops the helper and what it started.
libc = ctypes.CDLL(None, use_errno=True)
PR_SET_CHILD_SUBREAPER = 36
check("subreaper", libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def wait_gone(pid, limit=60.0):
    """Reaps pid (adopted by this process); bounded only so that a failure
    cannot hang the test."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            got, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return not os.path.exists("/proc/%d" % pid)
        if got == pid:
            return True
        time.sleep(0.05)
    return False


for sig in (signal.SIGTERM, signal.SIGINT):
    pids = os.path.join(WORK, "pids")
    if os.path.exists(pids):
        os.unlink(pids)
    p = subprocess.Popen([DMACONN, "--verify"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=env(FAKE_CUDA_HANG="1", FAKE_CUDA_GRANDCHILD=pids))
    end = time.monotonic() + 60
    while not os.path.exists(pids) and time.monotonic() < end and p.poll() is None:
        time.sleep(0.05)
    name = signal.Signals(sig).name
    check(name + "-started", os.path.exists(pids))
    if not os.path.exists(pids):
        p.kill()
        p.wait()
        continue
    child, helper = (int(x) for x in open(pids).read().split())
    p.send_signal(sig)
    p.wait()
    check(name + "-dmaconn-ended", p.returncode == -sig, str(p.returncode))
    check(name + "-helper-gone", wait_gone(helper))
    check(name + "-grandchild-gone", wait_gone(child))
    for pid in (child, helper):
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass

sys.exit(report.done())
