#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The connection table (src/model/connections.c) is the one description of
the built-in connection types, read through dmaconn_connection_text():

- every built-in detector has its row, and a pair that is not built in has
  none;
- README's table of detectors is the table's (device, connection, value,
  source, in dmaconn --list's order);
- --topo prints each device type's legend from the row it shows (its p2p
  type), and cuda/multicast's section under its row's title;
- dmaconn.torch registers exactly the pairs whose row names a PyTorch device
  type (nothing else decides it).

usage: connections_test.py LIBRARY CLI
"""
import ctypes
import importlib.util
import os
import re
import subprocess
import sys

from harness import Report, clean_env

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# dmaconn_connection_text_kind (include/dmaconn.h), read from the header.
KINDS = ("VALUE", "SOURCE", "TITLE", "PATHS", "CAPS", "STATUS", "TORCH")


def header_kinds():
    with open(os.path.join(REPO, "include", "dmaconn.h"), encoding="utf-8") as f:
        text = f.read()
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"\bDMACONN_CONNECTION_(\w+) = (\d+)", text)}


def detectors(lib):
    lib.dmaconn_list_detectors.restype = ctypes.c_int
    count = lib.dmaconn_list_detectors(None, None, 0)
    types = (ctypes.c_int * count)()
    conns = (ctypes.c_char_p * count)()
    lib.dmaconn_list_detectors(types, conns, count)
    lib.dmaconn_device_type_name.restype = ctypes.c_char_p
    return [(types[i], lib.dmaconn_device_type_name(types[i]).decode(), conns[i].decode()) for i in range(count)]


def readme_table():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("\n## Detectors\n", 1)[1].strip().split("\n\n", 1)[0]
    rows = []
    for line in section.splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        rows.append((cells[0].strip("`"), cells[1].strip("`"), cells[2], cells[3]))
    return rows


def main():
    lib_path, cli = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    report = Report()
    lib = ctypes.CDLL(lib_path)
    have = hasattr(lib, "dmaconn_connection_text")
    report.check(have, "the library describes its connection types (dmaconn_connection_text)")
    if not have:
        return report.done()
    kinds = header_kinds()
    report.equal("the header's text kinds", sorted(kinds), sorted(KINDS + ("TEXTS",)))
    fn = lib.dmaconn_connection_text
    fn.restype = ctypes.c_char_p
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]

    def text(t, conn, kind):
        value = fn(t, conn.encode(), kinds[kind])
        return value.decode() if value is not None else None

    builtin = detectors(lib)
    for t, name, conn in builtin:
        report.check(text(t, conn, "VALUE") and text(t, conn, "SOURCE"), "%s/%s has its row" % (name, conn))
    report.check(text(1, "bogus", "VALUE") is None and text(1, "p2p", "TEXTS") is None and text(9, "p2p", "VALUE")
                 is None, "no row for a pair that is not built in, no text past the kinds")

    want = [(name, conn, text(t, conn, "VALUE"), text(t, conn, "SOURCE")) for t, name, conn in builtin]
    report.equal("README's table of detectors", readme_table(), want)

    env = clean_env()
    for t, name, conn in builtin:
        paths = text(t, conn, "PATHS")
        if paths is None:
            continue
        replay = {"cuda": "examples/dgx-a100.json", "rocm": "examples/mi300x.json",
                  "xpu": "tests/topologies-xpu/pvc-2x2.json"}.get(name)
        if not replay or not os.path.exists(os.path.join(REPO, replay)):
            report.check(False, "a recording with %s devices" % name, replay or "none")
            continue
        out = subprocess.run([cli, "--replay", os.path.join(REPO, replay), "--topo", "-d", name], env=env,
                             capture_output=True, text=True).stdout
        report.check(paths in out and text(t, conn, "CAPS") in out and (text(t, conn, "STATUS") or "") in out,
                     "--topo -d %s shows the legend of %s/%s" % (name, name, conn))
        title = [text(u, c, "TITLE") for u, n, c in builtin if n == name and text(u, c, "TITLE")]
        report.check(all(x in out for x in title), "--topo -d %s shows the sections' titles" % name, title)

    # dmaconn/torch/_pairs.py alone: importing the package would register.
    sys.path.insert(0, os.path.join(REPO, "python"))
    os.environ["DMACONN_LIBRARY"] = lib_path
    spec = importlib.util.spec_from_file_location("pairs", os.path.join(REPO, "python", "dmaconn", "torch",
                                                                        "_pairs.py"))
    _pairs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(_pairs)
    pairs = _pairs.plan([(name, conn) for _, name, conn in builtin], rocm=False)
    rows = [(text(t, conn, "TORCH"), conn, name) for t, name, conn in builtin if text(t, conn, "TORCH")]
    report.equal("dmaconn.torch's pairs are the rows' device types",
                 [(p.torch_type, p.connection, p.dmaconn_type) for p in pairs], rows)
    return report.done()


if __name__ == "__main__":
    sys.exit(main())
