"""``python3 -m dmaconn``: the dmaconn command-line tool, on the Python binding.

Same options, text and JSON output as the C tool (recording aside).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any, List, NoReturn, Optional, Sequence

from . import _core
from ._core import DMAConnectivity
from ._errors import DmaconnWarning, Error, InvalidArgumentError

EXIT_USAGE = 2

USAGE = """\
Usage: python3 -m dmaconn [-d TYPE -c CONNECTION] [--json] [--replay FILE]
       python3 -m dmaconn --list | --help | --version

Shows which accelerators can issue load/store and atomic operations on each
other's memory: an N x N matrix per detector, 0 for no DMA connectivity,
otherwise a connection-specific value (the number of links for nvlink).
Without -d/-c every registered detector runs.

  -d, --device-type TYPE  cuda, rocm or xpu (with -c)
  -c, --connection CONN   connection type, e.g. nvlink (with -d)
  -j, --json              JSON on standard output
  -l, --list              list the registered detectors
      --replay FILE       answer every detector from FILE instead of the hardware
  -q, --quiet             no warnings on standard error (JSON keeps them)
  -h, --help              this help
  -V, --version           the version

Environment: CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER (device order, as CUDA),
DMACONN_QUIET, DMACONN_REPLAY, DMACONN_NVML_LIBRARY, DMACONN_SYSFS_ROOT,
DMACONN_LIBRARY (the shared library to load).
Exit status: 0 when detection ran (warnings included), 1 when it could not,
2 for bad arguments.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"dmaconn: {message}\n{USAGE}")
        sys.exit(EXIT_USAGE)


def _parser() -> _Parser:
    p = _Parser(prog="python3 -m dmaconn", add_help=False, allow_abbrev=False)
    p.add_argument("-d", "--device-type", dest="device_type")
    p.add_argument("-c", "--connection", dest="connection")
    p.add_argument("-j", "--json", action="store_true")
    p.add_argument("-l", "--list", action="store_true")
    p.add_argument("--replay", metavar="FILE")
    p.add_argument("-q", "--quiet", action="store_true")
    p.add_argument("-h", "--help", action="store_true")
    p.add_argument("-V", "--version", action="store_true")
    return p


class _Out:
    """Standard output as bytes, so that strings go out as the library gave them."""

    def __init__(self) -> None:
        self.chunks: List[str] = []

    def write(self, text: str) -> None:
        self.chunks.append(text)

    def flush(self) -> None:
        data = "".join(self.chunks).encode("utf-8", "surrogateescape")
        self.chunks.clear()
        sys.stdout.flush()
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is not None:
            buffer.write(data)
            buffer.flush()
        else:
            sys.stdout.write(data.decode("utf-8", "replace"))
            sys.stdout.flush()


def json_string(s: Optional[str]) -> str:
    """s as a JSON string literal, escaped exactly as the C tool does."""
    if s is None:
        return "null"
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def json_result(r: DMAConnectivity) -> str:
    """One result as the C tool's JSON object (no trailing newline)."""
    rows = ",".join("[" + ",".join(str(v) for v in row) + "]" for row in r.matrix)
    devices = []
    for i, props in enumerate(r.devices):
        fields = [f'"ordinal":{i}']
        fields += [
            f"{json_string(k)}:{json_string(str(v))}" for k, v in props.items() if k != "ordinal"
        ]
        devices.append("{" + ",".join(fields) + "}")
    warns = ",".join(json_string(w) for w in r.warnings)
    return (
        f'{{"device_type":{json_string(str(r.device_type))},'
        f'"connection_type":{json_string(r.connection_type)},'
        f'"matrix":[{rows}],"devices":[{",".join(devices)}],"warnings":[{warns}]}}'
    )


def text_result(r: DMAConnectivity, replay: Optional[str]) -> str:
    """One result as the C tool's text (header, matrix rows, device lines)."""
    n = len(r.matrix)
    lines = [
        f"{r.device_type}/{r.connection_type}"
        + (f" (replay of {replay})" if replay else "")
        + f": {n} device{'' if n == 1 else 's'}"
    ]
    lines += ["[" + ", ".join(str(v) for v in row) + "]" for row in r.matrix]
    for i, props in enumerate(r.devices):
        name = props.get("name")
        bus = props.get("pci_bus_id")
        uuid = props.get("uuid")
        line = f"  {i}: {name if name else '(unknown)'}"
        if bus is not None:
            line += f", {bus}"
        if uuid:
            line += f", {uuid}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def _quiet_env() -> bool:
    q = os.environ.get("DMACONN_QUIET", "")
    return bool(q) and q != "0"


def _detect(device_type: str, connection: str, quiet: bool) -> Any:
    """detect(), its warnings on stderr as the library prints them."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DmaconnWarning)
        try:
            return _core.detect(device_type, connection)
        finally:
            for w in caught:
                if issubclass(w.category, DmaconnWarning):
                    if not quiet:
                        sys.stderr.write(f"dmaconn: warning: {w.message}\n")
                else:
                    warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    if args.help:
        sys.stdout.write(USAGE)
        return 0
    try:
        if args.version:
            print(f"dmaconn {_core.version()}")
            return 0
        if (args.device_type is None) != (args.connection is None):
            sys.stderr.write("dmaconn: -d and -c go together\n")
            return EXIT_USAGE
        if args.replay is not None:
            os.environ["DMACONN_REPLAY"] = args.replay
        quiet = args.quiet or _quiet_env()
        if args.device_type is not None:
            try:
                device_type = _core.device_type_name(args.device_type)
            except InvalidArgumentError as exc:
                sys.stderr.write(f"dmaconn: {exc}\n")
                return EXIT_USAGE
        pairs = _core.list_detectors()
    except Error as exc:
        sys.stderr.write(f"dmaconn: {exc}\n")
        return 1

    out = _Out()
    status = 0
    first = True

    def run_one(dtype: str, conn: str) -> int:
        nonlocal first
        try:
            r = _detect(dtype, conn, quiet)
        except Error as exc:
            out.flush()
            sys.stderr.write(f"dmaconn: {exc}\n")
            return 1
        if args.json:
            out.write(("" if first else ",") + json_result(r))
        else:
            out.write(("" if first else "\n") + text_result(r, args.replay))
        first = False
        return 0

    if args.list:
        for dtype, conn in pairs:
            out.write(f"{dtype} {conn}\n")
    elif args.device_type is not None:
        status = run_one(device_type, args.connection)
        if args.json and status == 0:
            out.write("\n")
    else:
        if args.json:
            out.write(f'{{"version":{json_string(_core.version())},"results":[')
        for dtype, conn in pairs:
            status |= run_one(dtype, conn)
        if args.json:
            out.write("]}\n")
    out.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
