#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Intel detectors (xpu/p2p, xpu/xelink) against the stand-in Level Zero
loader, i.e. the replay component on tests/topologies-xpu/*.json.

usage: test_xpu.py BUILD_DIR [FILTER]

Every case of tests/topologies-xpu/cases.json runs `dmaconn -d xpu -c
CONNECTION --json` in a clean environment (ZE_*, CUDA_* and DMACONN_*
removed; DMACONN_REPLAY set to the case's topology unless it is live; the
case's env applied) and is checked as every replay case is
(tests/replay_cases.py): the matrix, the exact warnings (result and
stderr), the listed device and pair properties.  The expected values were worked out by hand from the rules in
src/backends/level_zero/order_ze.c and src/backends/level_zero/level_zero.c, not by running the program.

Beyond the cases: one fault per Level Zero function (each added to a copy of
pvc-2x2.json in a temporary directory), the count of devices from sysfs when
the loader is missing (a temporary sysfs tree), recordings of replays that
replay identically whatever the live ZE_* variables, and the Python binding.
DMACONN_TEST_WRAPPER (e.g. valgrind) is put in front of the CLI when set.
Python 3 standard library only.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

import replay_cases
from harness import Report, wrapper as harness_wrapper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TOPO = os.path.join(HERE, "topologies-xpu")
CASES = os.path.join(TOPO, "cases.json")
LOST = "ZE_RESULT_ERROR_DEVICE_LOST"


def zeros(n):
    return [[0] * n for _ in range(n)]


# pvc-2x2.json, FLAT: 0.0, 0.1, 1.0, 1.1.
PVC_P2P = [[0, 1, 1, 0], [1, 0, 0, 1], [1, 0, 0, 1], [0, 1, 1, 0]]
PVC_XELINK = [[0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0], [0, 1, 0, 0]]


def no_ze(label, why, n=0):
    return "xpu/%s: %s; assuming no DMA connectivity (%d device%s counted without Level Zero)" % (
        label, why, n, "" if n == 1 else "s")


# One fault per Level Zero function, on pvc-2x2.json: the fault, then the
# expected (matrix, warnings) of p2p and of xelink ("%s" is the label).
FAULTS = [
    ("zeInit", {}, ([], [no_ze("%s", "zeInit failed: " + LOST)])),
    ("zeDriverGet", {}, ([], [no_ze("%s", "zeDriverGet failed: " + LOST)])),
    ("zeDeviceGet", {"driver": 0}, ([], [no_ze("%s", "zeDeviceGet(driver 0) failed: " + LOST)])),
    ("zeDeviceGetProperties", {"device": "1.0"},
     ([], [no_ze("%s", "zeDeviceGetProperties(driver 0, device 2) failed: " + LOST)])),
    ("zeDeviceGetSubDevices", {},
     (None, ["xpu/%s: zeDeviceGetSubDevices(device 0) failed: " + LOST + "; tile counts are unknown"])),
    ("zeDevicePciGetPropertiesExt", {"device": "0.1"},
     (None, ["xpu/%s: zeDevicePciGetPropertiesExt(device 1) failed: " + LOST + "; PCI bus ids are unknown"])),
    ("zeDeviceGetP2PProperties", {"device": "0.0", "peer": "1.0"},
     {"p2p": (zeros(4), ["xpu/p2p: zeDeviceGetP2PProperties(device 0, device 2) failed: " + LOST +
                         "; assuming no peer access"]),
      "xelink": (PVC_XELINK, [])}),
]
FABRIC_FAULTS = [
    ("zeFabricVertexGetExp", {"driver": 0}, "zeFabricVertexGetExp(driver 0)"),
    ("zeFabricVertexGetSubVerticesExp", {"device": "0.1"}, "zeFabricVertexGetSubVerticesExp(device 1)"),
    ("zeFabricVertexGetPropertiesExp", {"device": "1.1"}, "zeFabricVertexGetPropertiesExp(driver 0, vertex 3)"),
    ("zeFabricVertexGetDeviceExp", {"device": "1.0"}, "zeFabricVertexGetDeviceExp(driver 0, vertex 2)"),
    ("zeFabricEdgeGetExp", {"device": "0.0", "peer": "1.0"}, "zeFabricEdgeGetExp(device 0, device 2)"),
    ("zeFabricEdgeGetPropertiesExp", {"edge": 0}, "zeFabricEdgeGetPropertiesExp(device 0, device 2, edge 0)"),
]
for fn, where, call in FABRIC_FAULTS:
    FAULTS.append((fn, where, {
        "p2p": (PVC_P2P, ["xpu/p2p: %s failed: %s; Xe Link paths and bandwidths are unknown" % (call, LOST)]),
        "xelink": (zeros(4), ["xpu/xelink: %s failed: %s; assuming no Xe Link connectivity" % (call, LOST)])}))


class Failure(Exception):
    pass


STAND_IN = None


def clean_env(extra, replay):
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("ZE_") or k.startswith("CUDA_") or k.startswith("DMACONN_"))}
    if replay:
        env["DMACONN_REPLAY"] = replay
    # Intel's runtime on a node described physically, and the injected
    # faults, are the test stand-in's (tests/replay_runtime.c).
    if STAND_IN:
        env["DMACONN_REPLAY_LIBRARY"] = STAND_IN
    for k, v in (extra or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def run_cli(cli, args, env):
    wrapper = harness_wrapper()
    p = subprocess.run(wrapper + [cli] + args, env=env, cwd=REPO, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        raise Failure("%s exited %d\n%s%s" % (" ".join(args), p.returncode, out, err))
    return out, err


def detect(cli, connection, env):
    out, err = run_cli(cli, ["-d", "xpu", "-c", connection, "--json"], env)
    try:
        return json.loads(out)["results"][0], err
    except (ValueError, KeyError, IndexError, TypeError):
        raise Failure("not JSON: %r" % out)


def check(case, obj, err, conn):
    quiet = (case.get("env") or {}).get("DMACONN_QUIET") not in (None, "", "0")
    problems = replay_cases.check(dict(case, connection=conn), obj, err, "xpu", quiet)
    if problems:
        raise Failure("\n  ".join(problems))




def topology_path(case, tmp):
    if case.get("topology") is None:
        path = os.path.join(tmp, "no-level-zero.json")
        with open(path, "w") as f:
            json.dump({"dmaconn_topology": 1, "description": "no level_zero section"}, f)
        return path
    return os.path.join(REPO, case["topology"])


def fault_cases(tmp):
    with open(os.path.join(TOPO, "pvc-2x2.json")) as f:
        base = json.load(f)
    out = []
    faults = FAULTS + [("zeFabricVertexGetExp", {"driver": 0, "error": "UNSUPPORTED_FEATURE"}, {
        # A driver without the fabric extension: p2p describes no paths, silently.
        "p2p": (PVC_P2P, []),
        "xelink": (zeros(4), ["xpu/xelink: zeFabricVertexGetExp(driver 0) failed: "
                              "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; assuming no Xe Link connectivity"])})]
    for k, (fn, where, expect) in enumerate(faults):
        topo = copy.deepcopy(base)
        fault = {"function": fn, "error": "DEVICE_LOST"}
        fault.update(where)
        topo["level_zero"]["faults"] = [fault]
        path = os.path.join(tmp, "fault-%02d-%s.json" % (k, fn))
        with open(path, "w") as f:
            json.dump(topo, f)
        for conn in ("p2p", "xelink"):
            matrix, warnings = expect[conn] if isinstance(expect, dict) else expect
            if matrix is None:
                matrix = PVC_P2P if conn == "p2p" else PVC_XELINK
            case = dict(name="fault-%s-%s%s" % (fn, conn, "-unsupported" if "error" in where else ""),
                        path=path, connection=conn, n=len(matrix), matrix=matrix,
                        warnings_equal=[w % conn if "%s" in w else w for w in warnings])
            if fn == "zeDevicePciGetPropertiesExt":
                case["devices"] = [{"pci_bus_id": "0000:29:00.0"}, None, {"pci_bus_id": "0000:9a:00.0"}, None]
            out.append(case)
    # A loader lacking a required function is no Level Zero loader.
    topo = copy.deepcopy(base)
    topo["level_zero"]["missing_functions"] = ["zeDeviceGet"]
    path = os.path.join(tmp, "missing-required.json")
    with open(path, "w") as f:
        json.dump(topo, f)
    out.append(dict(name="missing-required", path=path, connection="p2p", n=0, matrix=[],
                    warnings_equal=[no_ze("p2p", "libze_loader.so.1 lacks zeDeviceGet (not a Level Zero loader?)")]))
    # A loader without zeDeviceGetP2PProperties: no peer access, the fabric still counts.
    topo = copy.deepcopy(base)
    topo["level_zero"]["missing_functions"] = ["zeDeviceGetP2PProperties"]
    path = os.path.join(tmp, "missing-p2p.json")
    with open(path, "w") as f:
        json.dump(topo, f)
    out.append(dict(name="missing-p2p", path=path, connection="p2p", n=4, matrix=zeros(4),
                    warnings_equal=["xpu/p2p: the Level Zero loader lacks zeDeviceGetP2PProperties; "
                              "assuming no peer access"]))
    out.append(dict(name="missing-p2p-xelink", path=path, connection="xelink", n=4, matrix=PVC_XELINK))
    return out


def write_sysfs(root):
    """A host with two Data Center GPU Max (xe: tile<N>; i915: drm/card<N>/gt/gt<N>), an integrated
    GPU, an NVIDIA GPU and an Intel NIC."""
    devs = {
        "0000:00:02.0": ("0x8086", "0x030000", []),
        "0000:3a:00.0": ("0x8086", "0x038000", ["tile0", "tile1"]),
        "0000:9a:00.0": ("0x8086", "0x038000", ["drm/card1/gt/gt0", "drm/card1/gt/gt1"]),
        "0000:17:00.0": ("0x10de", "0x030200", []),
        "0000:18:00.0": ("0x8086", "0x020000", []),
    }
    for bdf, (vendor, cls, dirs) in devs.items():
        d = os.path.join(root, "sys", "bus", "pci", "devices", bdf)
        os.makedirs(d)
        for name, value in (("vendor", vendor), ("class", cls)):
            with open(os.path.join(d, name), "w") as f:
                f.write(value + "\n")
        for sub in dirs:
            os.makedirs(os.path.join(d, sub))


def live_cases(tmp):
    root = os.path.join(tmp, "sysfs")
    write_sysfs(root)
    lib = "/nonexistent/libze_loader.so.1"
    why = ("cannot load Level Zero: /nonexistent/libze_loader.so.1: cannot open shared object file: "
           "No such file or directory")
    base = {"DMACONN_ZE_LIBRARY": lib, "DMACONN_SYSFS_ROOT": root}
    flat5 = [("0000:3a:00.0", 0), ("0000:3a:00.0", 1), ("0000:9a:00.0", 0), ("0000:9a:00.0", 1),
             ("0000:00:02.0", None)]

    def devs(lst):
        return [{"pci_bus_id": b, "tile": t} if t is not None else {"pci_bus_id": b} for b, t in lst]

    return [
        # Discrete first, then PCI order; the first card has tiles, so FLAT.
        dict(name="sysfs-flat", live=True, env=base, connection="p2p", n=5, matrix=zeros(5),
             device_keys=["pci_bus_id"],
             warnings_equal=[no_ze("p2p", why, 5)], devices=devs(flat5)),
        dict(name="sysfs-mask", live=True, env=dict(base, ZE_AFFINITY_MASK="4,1"), connection="xelink", n=2,
             matrix=zeros(2), device_keys=["pci_bus_id"], warnings_equal=[no_ze("xelink", why, 2)],
             devices=devs([("0000:3a:00.0", 1), ("0000:00:02.0", None)])),
        dict(name="sysfs-composite", live=True, env=dict(base, ZE_FLAT_DEVICE_HIERARCHY="COMPOSITE"),
             connection="p2p", n=3, matrix=zeros(3), device_keys=["pci_bus_id"],
             warnings_equal=[no_ze("p2p", why, 3)],
             devices=devs([("0000:3a:00.0", None), ("0000:9a:00.0", None), ("0000:00:02.0", None)]),
             no_device_keys=["tile"]),
        # PCI order alone puts the integrated GPU first; a single-tile first card: COMPOSITE.
        dict(name="sysfs-pci-order", live=True, env=dict(base, ZE_ENABLE_PCI_ID_DEVICE_ORDER="1"),
             connection="p2p", n=3, matrix=zeros(3), device_keys=["pci_bus_id"],
             warnings_equal=[no_ze("p2p", why, 3)],
             devices=devs([("0000:00:02.0", None), ("0000:3a:00.0", None), ("0000:9a:00.0", None)])),
        dict(name="relative-ze-library", live=True,
             env={"DMACONN_ZE_LIBRARY": "libze_loader.so.1", "DMACONN_SYSFS_ROOT": os.path.join(tmp, "empty")},
             connection="xelink", n=0, matrix=[],
             warnings_equal=[no_ze("xelink", "DMACONN_ZE_LIBRARY must be an absolute path, not 'libze_loader.so.1'")]),
    ]


def round_trips(cli, tmp):
    """A recording of a replay replays identically, whatever the live ZE_* variables then."""
    problems = []
    rec = os.path.join(tmp, "recorded.json")
    trips = [("aurora-6x2.json", {}), ("aurora-6x2.json", {"ZE_AFFINITY_MASK": "0,2"}),
             ("aurora-6x2.json", {"ZE_FLAT_DEVICE_HIERARCHY": "COMPOSITE", "ZE_AFFINITY_MASK": "0.1,1.1"}),
             ("arc-pcie-4.json", {}), ("fabric-missing.json", {}), ("loader-missing.json", {}),
             ("init-fail.json", {})]
    for topo, env in trips:
        src = os.path.join(TOPO, topo)
        run_cli(cli, ["--replay", src, "--record", rec], clean_env(env, None))
        with open(rec) as f:
            recorded = json.load(f).get("level_zero")
        if recorded is None:
            problems.append("%s %s: the recording has no level_zero section" % (topo, env))
            continue
        if "drivers" in recorded and recorded.get("exposed") is not True:
            problems.append("%s %s: the recording is not marked exposed" % (topo, env))
        other = {"ZE_AFFINITY_MASK": "1", "ZE_FLAT_DEVICE_HIERARCHY": "COMBINED", "DMACONN_REPLAY_LIVE_ENV": "1"}
        for conn in ("p2p", "xelink"):
            a, _ = run_cli(cli, ["-d", "xpu", "-c", conn, "--json", "-q"], clean_env(env, src))
            b, _ = run_cli(cli, ["-d", "xpu", "-c", conn, "--json", "-q"], clean_env(other, rec))
            if a != b:
                problems.append("%s %s %s: the recording replays differently:\n    %s\n    %s" % (
                    topo, env, conn, a.strip()[:400], b.strip()[:400]))
    return problems


def topo(cli, tmp):
    """--topo -d xpu shows paths, P2P flags, bandwidth and latency."""
    env = clean_env({"ZE_AFFINITY_MASK": "0,1,2,3"}, os.path.join(TOPO, "aurora-6x2.json"))
    out, err = run_cli(cli, ["--topo", "-d", "xpu"], env)
    want = ["GPU0    X        MDFI     XL1      -",
            "GPU0 -> GPU1: DMA yes; p2p ACCESS|ATOMICS; MDFI",
            "GPU0 -> GPU2: DMA yes; p2p ACCESS|ATOMICS; XL1, 26.0 GB/s, latency 1 hop, full duplex",
            "GPU0 -> GPU3: DMA no; p2p ACCESS; -"]
    return ["--topo lacks %r:\n%s" % (w, out) for w in want if w not in out] + (["stderr: " + err] if err else [])


def binding(build, tmp):
    """The Python binding sees the same result."""
    lib = os.path.join(build, "libdmaconn.so.0")
    if not os.path.exists(lib):
        return ["no %s" % lib]
    code = ("import dmaconn, json; r = dmaconn.detect('xpu', 'xelink'); "
            "print(json.dumps([r.matrix, r.devices[0].get('tiles'), r.pair(0, 1).get('path'), r.warnings]))")
    env = clean_env({"ZE_FLAT_DEVICE_HIERARCHY": "COMPOSITE", "ZE_AFFINITY_MASK": "0,2",
                     "DMACONN_LIBRARY": lib, "PYTHONPATH": os.path.join(REPO, "python")},
                    os.path.join(TOPO, "aurora-6x2.json"))
    p = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    want = [[[0, 2], [2, 0]], 2, "XL2", []]
    if p.returncode != 0:
        return ["binding: %s" % p.stderr.decode("utf-8", "replace")]
    got = json.loads(p.stdout.decode())
    return [] if got == want else ["binding: expected %s, got %s" % (want, got)]


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write("usage: %s BUILD_DIR [FILTER]\n" % argv[0])
        return 2
    build = os.path.abspath(argv[1])
    cli = build if os.path.isfile(build) else os.path.join(build, "dmaconn")
    build = os.path.dirname(cli)
    global STAND_IN
    STAND_IN = os.path.join(build, "tests", "libdmaconn_replay_faults.so")
    if not os.path.exists(STAND_IN):
        sys.stderr.write("no test stand-in at %s\n" % STAND_IN)
        return 1
    pattern = argv[2] if len(argv) == 3 else ""
    report = Report()
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "empty"))
        cases = replay_cases.load(CASES) + fault_cases(tmp) + live_cases(tmp)
        for case in cases:
            if pattern not in case["name"]:
                continue
            try:
                replay = None if case.get("live") else case.get("path") or topology_path(case, tmp)
                obj, err = detect(cli, case["connection"], clean_env(case.get("env"), replay))
                check(case, obj, err, case["connection"])
            except (Failure, subprocess.TimeoutExpired) as e:
                report.check(False, case["name"], e)
            else:
                report.check(True, case["name"])
        for name, fn in (("round-trips", lambda: round_trips(cli, tmp)), ("topo", lambda: topo(cli, tmp)),
                         ("binding", lambda: binding(build, tmp))):
            if pattern not in name:
                continue
            if name == "binding" and (os.environ.get("DMACONN_TEST_WRAPPER") or
                                      os.environ.get("DMACONN_XPU_SKIP_BINDING")):
                continue  # the binding loads the library into Python itself
            try:
                problems = fn()
            except Failure as e:
                problems = [str(e)]
            report.problems(name, problems)
    return report.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
