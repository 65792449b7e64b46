#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Property values are read in one place: no strtol & co. on them elsewhere.

Usage: props_parse_test.py [REPO]   (default: this checkout)

A property's value is text in the result; src/props.c reads it as its
key's type (dmaconn_property_read_*, the typed getters), and everything
else asks those.  This test greps the product code (src/, tools/, replay/
and python/dmaconn/) for the C library's number parsers (strtol, strtoul,
strtoll, strtoull, strtod, strtof, strtold, sscanf, atoi, atol, atoll, atof)
and, in Python, int( and float( calls.  Each one must be in a file allowed
below (the reader itself, and parsers of vendor and environment text that
are not property values) or on a line allowed below, with the reason; an
allowance that matches nothing any more fails too, so the list stays true.
Prints each finding; exits 1 if any.
"""

import os
import re
import sys

# Whole files: what they parse is not a property value of a result.
ALLOWED_FILES = {
    "src/props.c": "the one reader of property values",
    "src/codec.c": "the result codec (built also into the replay component, which cannot call src/props.c)",
    "src/sysfs.c": "vendor text: sysfs files",
    "src/backends/nvml/nvml.c": "vendor text: NVML's driver version string",
    "src/model/imex.c": "vendor text: /proc/devices",
    "src/pci.c": "vendor text: the kernel's CPU lists (local_cpulist, node cpulist)",
    "src/placement_detect.c": "vendor text: sysfs node names, the kernel's and the driver's versions",
    "src/backends/kfd/kfd.c": "vendor text: the KFD topology in sysfs",
    "src/pci.c": "vendor text: the kernel's list form of CPU and node sets (sysfs, NVML's affinity)",
    "src/placement_detect.c": "vendor text: sysfs node names, the kernel release, /proc/driver/nvidia/version",
    "src/backends/level_zero/level_zero.c": "vendor text: sysfs of Intel GPUs",
    "src/order/order.c": "environment: CUDA_VISIBLE_DEVICES and its kin",
    "src/backends/kfd/order_hip.c": "environment: ROCR/HIP visibility variables",
    "src/backends/level_zero/order_ze.c": "environment: ZE_AFFINITY_MASK, sysfs",
    "src/env.c": "environment: DMACONN_NVML_THREADS",
    "src/verify.c": "environment: DMACONN_VERIFY_PAIR_TIMEOUT_MS",
    "src/backends/nvml/replay/replay_nvml.c": "the replay file's answer indices",
    "src/backends/level_zero/replay/ze.c": "the replay file's Level Zero ids",
    "src/backends/cuda_verify/verify_helper.c": "the helper's command line",
}

# Lines of other files (a fragment of the line): command lines, the
# environment, the JSON text check reads.
ALLOWED_LINES = {
    "tools/cli.c": {
        "strtol(optarg": "--timeout's argument",
        "return atoi(v);": "an MPI launcher's local-rank variable",
    },
    "tools/check.c": {
        "strtol(optarg": "a command-line argument",
        "double d = strtod(num, NULL);": "whether a JSON number fits",
        "(void)strtoll(num, NULL, 10);": "whether a JSON number fits",
    },
    "python/dmaconn/_core.py": {
        "Fraction(float(timeout))": "verify()'s timeout argument",
    },
    "python/dmaconn/torch/__init__.py": {
        "return int(value)": "PyTorch's DeviceType enum member",
    },
    "python/dmaconn/torch/_shim.py": {
        "return int(bool(getattr(": "PyTorch's C++ ABI flag",
    },
    "tools/place.c": {
        "strtol(arg, &end, 10)": "--bind's argument",
    },
    "python/dmaconn/_placement.py": {
        "cpus.extend(range(int(low), int(high or low) + 1))": "a placement's cpuset (the kernel's CPU list form)",
    },
    "tools/format_slurm_topology.c": {
        "strtoull(names[k] + p, NULL, 10)": "host names' numeric suffixes (hostlist ranges), not a property",
    },
    "python/dmaconn/_json.py": {
        "number = int(ident)": "fabric_cliques' ids, as the codec reads them (no C reader for a list of pairs)",
    },
    "python/dmaconn/_multinode.py": {
        "[int(i) for i in devices]": "the caller's device indices",
    },
}

C_CALL = re.compile(r"\b(strto(?:l|ul|ll|ull|d|f|ld)|sscanf|atoi|atol|atoll|atof)\s*\(")
PY_CALL = re.compile(r"(?<![\w.])(int|float)\s*\(")


def strip_c_comments(text):
    """text with /* */ and // comments and string literals blanked, lines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(q + " " * (min(j, n) - i - 1) + (q if j < n else ""))
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def strip_py_comments(text):
    return "\n".join(re.sub(r"#.*", "", line) for line in text.split("\n"))


def product_files(repo):
    for top in ("src", "tools", "replay", os.path.join("python", "dmaconn")):
        for root, _, files in os.walk(os.path.join(repo, top)):
            for f in sorted(files):
                if f.endswith((".c", ".h", ".py")):
                    yield os.path.relpath(os.path.join(root, f), repo)


def main(argv):
    repo = os.path.abspath(argv[1]) if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems, used, found = [], set(), 0
    for rel in product_files(repo):
        with open(os.path.join(repo, rel), encoding="utf-8") as f:
            raw = f.read()
        py = rel.endswith(".py")
        code = strip_py_comments(raw) if py else strip_c_comments(raw)
        raw_lines = raw.split("\n")
        for no, line in enumerate(code.split("\n"), 1):
            for m in (PY_CALL if py else C_CALL).finditer(line):
                found += 1
                if rel in ALLOWED_FILES:
                    used.add((rel, None))
                    continue
                allowed = [frag for frag in ALLOWED_LINES.get(rel, {}) if frag in raw_lines[no - 1]]
                if allowed:
                    used.add((rel, allowed[0]))
                    continue
                problems.append("%s:%d: %s( outside the property reader: %s"
                                % (rel, no, m.group(1), raw_lines[no - 1].strip()))
    for rel in ALLOWED_FILES:
        if (rel, None) not in used:
            problems.append("%s: allowed, but parses nothing any more (drop it from ALLOWED_FILES)" % rel)
    for rel, frags in ALLOWED_LINES.items():
        for frag in frags:
            if (rel, frag) not in used:
                problems.append("%s: the allowed line %r is gone (drop it from ALLOWED_LINES)" % (rel, frag))
    for p in problems:
        print("FAIL " + p)
    print("props_parse: %d parser calls in product code, %d outside the allowed places" % (found, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
