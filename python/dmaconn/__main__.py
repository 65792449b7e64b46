"""``python3 -m dmaconn``: the dmaconn command-line tool, on the Python binding.

Same options, text and JSON output as the C tool (recording aside).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Callable, List, NoReturn, Optional, Sequence, TypeVar

from . import _core
from ._core import DMAConnectivity, VerifyResult
from ._errors import DmaconnWarning, Error, InvalidArgumentError

EXIT_USAGE = 2
T = TypeVar("T")

USAGE = """\
Usage: python3 -m dmaconn [-d TYPE -c CONNECTION] [--json] [--replay FILE]
       python3 -m dmaconn --topo [-d TYPE] | --verify [-d TYPE]
       python3 -m dmaconn --list | --help | --version

Shows which accelerators can issue load/store and atomic operations on each
other's memory: an N x N matrix per detector, 0 for no DMA connectivity,
otherwise a connection-specific value (the number of links for nvlink).
Without -d/-c every registered detector runs.

  -d, --device-type TYPE  cuda, rocm or xpu (with -c)
  -c, --connection CONN   connection type, e.g. nvlink (with -d)
  -j, --json              JSON on standard output
  -l, --list              list the registered detectors
  -t, --topo              a `nvidia-smi topo -m`-like table with each pair's
                          peer capabilities (cuda/p2p; -d selects the type)
  -v, --verify            prove peer load/store/atomics by running a kernel on
                          every pair, in a helper process; measures GB/s
      --timeout SECONDS   bound --verify (default 120)
      --replay FILE       answer every detector from FILE instead of the hardware
  -q, --quiet             no warnings on standard error (JSON keeps them)
  -h, --help              this help
  -V, --version           the version

Environment: CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER (device order, as CUDA),
DMACONN_QUIET, DMACONN_REPLAY, DMACONN_NVML_LIBRARY, DMACONN_SYSFS_ROOT,
DMACONN_LIBRARY (the shared library to load).
Exit status: 0 when detection ran (warnings included), 1 when it could not
(or --verify found a failing pair), 2 for bad arguments.
"""

PATHS_LEGEND = """
Paths: X = self; NV# = # bonded NVLinks; PIX = at most one PCIe bridge;
PXB = several PCIe bridges, no host bridge; PHB = through a PCIe host bridge;
NODE = between host bridges of one NUMA node; SYS = across NUMA nodes;
? = NVML gives no PCIe path; - = no answer.
"""

STATUS_LEGEND = """
Status: OK = supported; CNS = chipset not supported; GNS = GPU not supported;
TNS = topology not supported; DR = disabled by the driver's registry key;
NS = not supported; U = unknown.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"dmaconn: {message}\n{USAGE}")
        sys.exit(EXIT_USAGE)


def _timeout(text: str) -> int:
    try:
        seconds = int(text, 10)
    except ValueError:
        seconds = 0
    if not 0 < seconds <= 86400:
        sys.stderr.write("dmaconn: --timeout takes seconds, 1 to 86400\n")
        sys.exit(EXIT_USAGE)
    return seconds


def _parser() -> _Parser:
    p = _Parser(prog="python3 -m dmaconn", add_help=False, allow_abbrev=False)
    p.add_argument("-d", "--device-type", dest="device_type")
    p.add_argument("-c", "--connection", dest="connection")
    p.add_argument("-j", "--json", action="store_true")
    p.add_argument("-l", "--list", action="store_true")
    p.add_argument("-t", "--topo", action="store_true")
    p.add_argument("-v", "--verify", action="store_true")
    p.add_argument("--timeout", type=_timeout)
    p.add_argument("--replay", metavar="FILE")
    p.add_argument("-q", "--quiet", action="store_true")
    p.add_argument("-h", "--help", action="store_true")
    p.add_argument("-V", "--version", action="store_true")
    p.add_argument("extra", nargs="*", help=argparse.SUPPRESS)
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


# ------------------------------------------------------------------- JSON


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


def _json_members(entry: dict, first: Sequence[str]) -> str:
    """The members of a dict: the ``first`` keys as numbers, the rest as strings."""
    head = [f'"{key}":{entry[key]}' for key in first]
    rest = [f"{json_string(k)}:{json_string(str(v))}" for k, v in entry.items() if k not in first]
    return ",".join(head + rest)


def json_result(r: DMAConnectivity) -> str:
    """One result as the C tool's JSON object (no trailing newline)."""
    rows = ",".join("[" + ",".join(str(v) for v in row) + "]" for row in r.matrix)
    devices = ",".join("{" + _json_members(d, ["ordinal"]) + "}" for d in r.devices)
    text = (
        f'{{"device_type":{json_string(str(r.device_type))},'
        f'"connection_type":{json_string(r.connection_type)},'
        f'"matrix":[{rows}],"devices":[{devices}]'
    )
    if r.pairs:
        text += ',"pairs":[' + ",".join("{" + _json_members(p, ["from", "to"]) + "}" for p in r.pairs) + "]"
    warns = ",".join(json_string(w) for w in r.warnings)
    return text + f',"warnings":[{warns}]}}'


def json_verify(v: VerifyResult) -> str:
    """A verification as the C tool's JSON object (no trailing newline)."""
    pairs = ",".join(
        "{" + _json_members({**p, "status": json_string(p["status"])}, ["from", "to", "status"]) + "}"
        for p in v.pairs
    )
    warns = ",".join(json_string(w) for w in v.warnings)
    return f'{{"device_type":"{v.device_type}","verify":[{pairs}],"warnings":[{warns}]}}'


# ------------------------------------------------------------------- text


def _plural(n: int) -> str:
    return "" if n == 1 else "s"


def text_result(r: DMAConnectivity, replay: Optional[str]) -> str:
    """One result as the C tool's text (header, matrix rows, device lines)."""
    n = len(r.matrix)
    lines = [
        f"{r.device_type}/{r.connection_type}"
        + (f" (replay of {replay})" if replay else "")
        + f": {n} device{_plural(n)}"
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


def text_topo(r: DMAConnectivity, replay: Optional[str]) -> str:
    """A p2p result as the C tool's `nvidia-smi topo -m`-like table."""
    n = len(r.matrix)
    label = f" (replay of {replay})" if replay else ""
    out = [f"{r.device_type} topology{label}: {n} device{_plural(n)}\n"]
    if n == 0:
        return "".join(out)
    out.append("      " + "".join(f"  GPU{j:<4d}" for j in range(n)) + "\n")
    for i in range(n):
        cells = []
        for j in range(n):
            path = "X" if i == j else r.pair(i, j).get("path")
            cells.append(f"  {path if path is not None else '-':<7}")
        out.append(f"GPU{i:<3d}" + "".join(cells) + "\n")
    out.append(PATHS_LEGEND + "\n")
    out.append("Peer capabilities (DMA = load/store and atomics all OK):\n")
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            p = r.pair(i, j)
            line = (
                f"  GPU{i} -> GPU{j}: DMA {'yes' if r.matrix[i][j] else 'no'}; "
                f"read {p.get('read', '-')}, write {p.get('write', '-')}, "
                f"atomics {p.get('atomics', '-')}, nvlink {p.get('nvlink', '-')}"
            )
            if "nvlink_gbps" in p:
                line += f"; {p['nvlink_gbps']} GB/s per direction ({p.get('nvlink_rate_source', 'unknown')})"
            out.append(line + "\n")
    out.append(STATUS_LEGEND)
    return "".join(out)


def text_verify(v: VerifyResult) -> str:
    """A verification as the C tool's text."""
    out = [f"{v.device_type} verify: {v.size} device{_plural(v.size)}\n"]
    for p in v.pairs:
        line = f"  GPU{p['from']} -> GPU{p['to']}: {p['status']}"
        if p["status"] == "pass":
            if "gbps" in p:
                line += f", {p['gbps']} GB/s"
            if "latency_us" in p:
                line += f", {p['latency_us']} us one-way"
        elif p.get("reason"):
            line += f" ({p['reason']})"
        out.append(line + "\n")
    return "".join(out)


# -------------------------------------------------------------------- main


def _quiet_env() -> bool:
    q = os.environ.get("DMACONN_QUIET", "")
    return bool(q) and q != "0"


def _with_warnings(call: Callable[[], T], quiet: bool) -> T:
    """call(), its DmaconnWarnings on stderr as the library prints them."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DmaconnWarning)
        try:
            return call()
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
    out = _Out()
    try:
        if args.version:
            print(f"dmaconn {_core.version()}")
            return 0
        if args.extra:
            sys.stderr.write(f"dmaconn: unexpected argument '{args.extra[0]}'\n{USAGE}")
            return EXIT_USAGE
        special = args.topo or args.verify
        if special and args.connection is not None:
            sys.stderr.write("dmaconn: --topo and --verify take -d only\n")
            return EXIT_USAGE
        if (args.device_type is None) != (args.connection is None) and not (
            special and args.device_type is not None
        ):
            sys.stderr.write("dmaconn: -d and -c go together\n")
            return EXIT_USAGE
        replay = args.replay
        if replay is not None:
            os.environ["DMACONN_REPLAY"] = replay
        elif os.environ.get("DMACONN_REPLAY"):
            replay = os.environ["DMACONN_REPLAY"]  # label replayed output either way
        quiet = args.quiet or _quiet_env()
        device_type = "cuda"
        if args.device_type is not None:
            try:
                device_type = _core.device_type_name(args.device_type)
            except InvalidArgumentError as exc:
                sys.stderr.write(f"dmaconn: {exc}\n")
                return EXIT_USAGE
        pairs = _core.list_detectors()

        status = 0
        first = True

        def run_one(dtype: str, conn: str, topo: bool = False) -> int:
            nonlocal first
            try:
                r = _with_warnings(lambda: _core.detect(dtype, conn), quiet)
            except Error as exc:
                out.flush()
                sys.stderr.write(f"dmaconn: {exc}\n")
                return 1
            if args.json:
                out.write(("" if first else ",") + json_result(r))
            else:
                text = text_topo(r, replay) if topo else text_result(r, replay)
                out.write(("" if first else "\n") + text)
            first = False
            return 0

        if args.verify:
            v = _with_warnings(lambda: _core.verify(device_type, args.timeout), quiet)
            out.write(json_verify(v) + "\n" if args.json else text_verify(v))
            status = 0 if v.ok else 1
        elif args.topo:
            status = run_one(device_type, "p2p", topo=True)
            if args.json and status == 0:
                out.write("\n")
        elif args.list:
            for dtype, conn in pairs:
                out.write(f"{dtype} {conn}\n")
        elif args.device_type is not None:
            status = run_one(device_type, args.connection)
            if args.json and status == 0:
                out.write("\n")
        else:
            if args.json:
                out.write(f'{{"version":"{_core.version()}","results":[')
            for dtype, conn in pairs:
                status |= run_one(dtype, conn)
            if args.json:
                out.write("]}\n")
    except Error as exc:
        out.flush()
        sys.stderr.write(f"dmaconn: {exc}\n")
        return 1
    out.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
