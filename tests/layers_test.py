#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The layers of docs/architecture.md, checked on the sources: who may
include whom, and who may call whom.

Layers, from the ground up (a file may include its own layer's headers and
those of the layers it is allowed below it, nothing above):

  public     include/                      -- nothing of src/
  shared     src/pci.*, src/linkmatrix.*,  -- public only
             src/codec*.* (results as JSON)
  core       src/*.c|h, src/model, src/order, src/verify/verify.h
                                           -- public, shared, the backend
                                              interface src/backends/backend.h
                                              and the replay ABI src/replay_abi.h
  backends   src/backends/, one directory  -- core and their own headers
             per vendor (its view code, order,
             function table and loader)
  replay     replay/, and each vendor's    -- public, shared (pci.h), the replay
             section of it,                   ABI and the vendor function tables
             src/backends/*/replay/           (src/backends/*/*_api.h, *_functions.h,
                                              *_load.h, loader.h): no core header
  mpi        src/mpi/                      -- public only (the merge, and the
                                              rule it applies, are the core's:
                                              src/merge.c)
  tools      tools/                        -- public and the MPI entry point

Calls: the core names no backend (no function defined in src/backends/ is
called from a core file; the table src/backends/table.c is the one way in),
and replay/ and tools/ call nothing of src/ but the shared PCI helpers, the
result codec and the loaders of the vendor tables.  Prints each violation; exits 1 if any.
"""
import glob
import os
import re
import sys

from harness import finish

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The shared layer holds src/place_keys.h too: the placement's integer keys (props.c, the codec).
SHARED = {"src/pci.h", "src/linkmatrix.h", "src/codec.h", "src/place_keys.h"}
SHARED_SOURCES = {"src/pci.c", "src/linkmatrix.c", "src/codec.c", "src/codec_result.c"}
TABLES = {"src/backends/%s" % h for h in ("nvml/nvml_api.h", "nvml/nvml_functions.h", "nvml/nvml_load.h",
                                          "level_zero/ze_api.h", "level_zero/ze_functions.h",
                                          "level_zero/ze_load.h", "loader.h", "cuda_verify/cuda_api.h",
                                          "kfd/rocm_smi_api.h", "params.h")}
# Each vendor's directory (CMakeLists.txt's DMACONN_VENDOR_TABLES).
VENDOR_DIRS = ["src/backends"] + sorted(os.path.relpath(d, REPO).rstrip("/")
                                        for d in glob.glob(os.path.join(REPO, "src/backends/*/")))
# The vendors' sections of the replay component (its DMACONN_REPLAY_DIRS).
REPLAY_DIRS = sorted(os.path.relpath(d, REPO).rstrip("/")
                     for d in glob.glob(os.path.join(REPO, "src/backends/*/replay/")))


def layer(path):
    if path.startswith("include/"):
        return "public"
    if path in SHARED or path in SHARED_SOURCES:
        return "shared"
    if re.match(r"src/backends/[^/]+/replay/", path):
        return "replay"
    if path.startswith("src/backends/"):
        return "backends"
    if path.startswith("src/mpi/"):
        return "mpi"
    if path.startswith("src/"):
        return "core"
    if path.startswith("replay/"):
        return "replay"
    if path.startswith("tools/"):
        return "tools"
    return None


def allowed(src, dst):
    """May src (a file) include dst (a header)?"""
    a, b = layer(src), layer(dst)
    if b == "public" or a == b:
        return a != "public" or b == "public"
    if b == "shared":
        # libdmaconn_mpi exchanges records; the merge and its rule are the core's.
        return a not in ("public", "mpi")
    if a == "core":
        return dst in ("src/backends/backend.h",) or dst == "src/replay_abi.h"
    if a == "backends":
        return b == "core"
    if a == "replay":
        return dst in TABLES or dst == "src/replay_abi.h"
    if a == "mpi":
        return False
    if a == "tools":
        return dst == "src/mpi/dmaconn_mpi_cli.h"
    return False


# Where each target looks for "x.h" (CMakeLists.txt's include directories).
SEARCH = {"core": ["src", "include"], "backends": ["src"] + VENDOR_DIRS + ["include"],
          "shared": ["src", "include"], "replay": ["replay", "src"] + VENDOR_DIRS + REPLAY_DIRS + ["include"],
          "mpi": ["src/mpi", "src", "include"], "tools": ["tools", "include"],
          "public": ["include"]}


def resolve(src, name):
    here = os.path.dirname(src)
    for d in [here] + SEARCH[layer(src)]:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(REPO, p)):
            return p
    return None


def defined(path):
    """Functions a .c file defines with external linkage."""
    with open(os.path.join(REPO, path)) as f:
        text = f.read()
    return set(re.findall(r"^(?!static\b)[A-Za-z_][\w \*]*?\b(\w+)\([^;{]*\)\s*\{", text, re.M))


def main():
    files = []
    for pattern in ("include/*.h", "src/**/*.[ch]", "replay/*.[ch]", "tools/*.[ch]"):
        files += [os.path.relpath(f, REPO) for f in glob.glob(os.path.join(REPO, pattern), recursive=True)]
    problems = []
    for f in sorted(files):
        with open(os.path.join(REPO, f)) as fh:
            text = fh.read()
        for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
            dst = resolve(f, name)
            if dst is None:
                problems.append("%s: includes \"%s\", which is not in the tree" % (f, name))
            elif not allowed(f, dst):
                problems.append("%s (%s) includes %s (%s)" % (f, layer(f), dst, layer(dst)))
    backend_fns = set()
    for f in glob.glob(os.path.join(REPO, "src/backends/**/*.c"), recursive=True):
        if not f.endswith("table.c") and layer(os.path.relpath(f, REPO)) == "backends":
            backend_fns |= defined(os.path.relpath(f, REPO))
    src_fns = set()
    for f in glob.glob(os.path.join(REPO, "src/**/*.c"), recursive=True):
        rel = os.path.relpath(f, REPO)
        if layer(rel) not in ("shared", "replay") and not rel.endswith(("_load.c", "loader.c")):
            src_fns |= defined(rel)
    public = set()
    for h in glob.glob(os.path.join(REPO, "include", "*.h")):
        with open(h) as fh:
            public |= set(re.findall(r"\b(dmaconn_\w+)\s*\(", fh.read()))
    src_fns -= public
    for f in sorted(files):
        if not f.endswith(".c"):
            continue
        with open(os.path.join(REPO, f)) as fh:
            code = re.sub(r"/\*.*?\*/", "", fh.read(), flags=re.S)
        called = set(re.findall(r"\b(\w+)\s*\(", code))
        own = defined(f)
        if layer(f) == "core":
            for fn in sorted((called & backend_fns) - own):
                problems.append("%s (core) calls %s of a backend" % (f, fn))
        if layer(f) in ("replay", "tools"):
            for fn in sorted((called & src_fns) - own):
                problems.append("%s (%s) calls %s of the library's internals" % (f, layer(f), fn))
    return finish(problems, "%d files checked, %d backend and %d internal functions" % (
        len(files), len(backend_fns), len(src_fns)))


if __name__ == "__main__":
    sys.exit(main())
