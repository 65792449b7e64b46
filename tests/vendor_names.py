#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Each vendor lives in its own directory: its name, its libraries and its
runtime's variables appear in product code (src, tools, replay,
python/dmaconn, include) only there, in the backend table and in the
replay component's table of sections.

What a vendor is called comes from its descriptor (struct dc_backend,
src/backends/backend.h) and the files of its directory, never from a list
here: the backend's name, its libraries' names, sonames and override
variables (struct dc_library), its visibility variables (struct
dc_visibility), and the functions of its X-macro tables with their prefix
(nvmlInit_v2: "nvml", zeInit: "ze", rsmi_init: "rsmi", cuInit: "cu").  A
device type ("cuda", "rocm", "xpu") is the API's word, not a vendor's.

Code is checked, not prose: identifiers and string literals, after C and
Python comments and docstrings are dropped (docs/architecture.md, "Vendor
names", says why).  The public property keys (include/dmaconn_props.h, the
DMACONN_PROP_ and DMACONN_PLACE_ constants) name the fact they carry and
may name its vendor.  KNOWN lists the places that still name a vendor
outside its directory, each with its reason: a new place fails, and so does
an entry that no longer names the vendor (remove it).

    vendor_names.py [REPO]     (default: this checkout)
"""
import os
import re
import sys

from harness import finish

REPO = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else \
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRODUCT = ("src", "tools", "replay", "python/dmaconn", "include")
TABLE = "src/backends/table.c"
# The replay component's table of a topology file's sections, which names
# each vendor library's section (its code is in the vendor's directory).
REPLAY_TABLE = "replay/sections.c"
# The connection types' table: a row's legend names the source its values
# come from ("NVML", "amdgpu KFD topology", "Level Zero").
CONNECTIONS = "src/model/connections.c"
PROPS = "include/dmaconn_props.h"
DEVICE_TYPES = {"cuda", "rocm", "xpu"}

# (file, backend): why the file still names the vendor.  Only shrinks.
KNOWN = {
    # The core's per-detection configuration (dc_config) holds NVML's tuning
    # variables (DMACONN_NVML_THREADS, DMACONN_NVML_NO_BATCH).
    ("src/env.c", "nvml"): "NVML's tuning variables, read once per detection",
    ("src/internal.h", "nvml"): "NVML's tuning variables in struct dc_config",
    # Texts the program prints (kept identical) and public values.
    ("src/merge.c", "nvml"): "a warning's advice names CUDA_VISIBLE_DEVICES",
    ("src/merge.c", "kfd"): "the same warning (HIP reads CUDA_VISIBLE_DEVICES too)",
    ("src/placement_detect.c", "nvml"): "the public cpu_source value \"nvml\"",
    ("include/dmaconn.h", "nvml"): "public values: DMACONN_FABRIC_STATUS_SUCCESS is \"NVML_SUCCESS\"",
    ("src/verify.c", "nvml"): "dmaconn_verify cross-checks the helper with the NVML view and says so",
    ("src/model/reasons.c", "nvml"): "reason texts name where a fact came from",
    ("src/model/reasons.c", "kfd"): "reason texts name where a fact came from",
    ("src/model/reasons.c", "level_zero"): "reason texts name where a fact came from",
    ("tools/check.c", "nvml"): "dmaconn check's findings name NVML",
    ("tools/cli.c", "nvml"): "the help text lists the variables",
    ("tools/cli.c", "kfd"): "the help text lists the variables",
    ("tools/cli.c", "level_zero"): "the help text lists the variables",
    ("tools/format_slurm.c", "nvml"): "gres.conf comments name NVML's index and AutoDetect=nvml",
    ("tools/topo.c", "nvml"): "--topo legends name NVML",
}


def strip_c(text):
    """C text without comments (strings kept, newlines kept)."""
    def drop(m):
        token = m.group(0)
        return token if token[0] in "\"'" else "\n" * token.count("\n")
    return re.sub(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', drop, text, flags=re.S)


def strip_py(text):
    """Python text without comments and docstrings."""
    text = re.sub(r'^\s*[rbuRBU]?("""|\'\'\')(?:.|\n)*?\1', "", text, flags=re.M)
    return re.sub(r'#[^\n"\']*$', "", text, flags=re.M)


def parts(word):
    """The lower-case parts of an identifier or a string's word: split at
    "_", "-", "." and where a lower-case letter meets an upper-case one."""
    out = []
    for piece in re.split(r"[^A-Za-z0-9]+", word):
        out += [p.lower() for p in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", piece)]
    return out


def has_run(seq, run):
    return any(seq[k:k + len(run)] == run for k in range(len(seq) - len(run) + 1))


def descriptors(problems):
    """{backend name: {"dir", "words", "literals"}} from the sources."""
    found = {}
    for root, _, names in os.walk(os.path.join(REPO, "src", "backends")):
        for name in names:
            if not name.endswith(".c"):
                continue
            path = os.path.join(root, name)
            text = strip_c(open(path).read())
            for m in re.finditer(r"const struct dc_backend dc_backend_\w+\s*=\s*\{(.*?)\};", text, re.S):
                body = m.group(1)
                backend = re.search(r'(?:\.name\s*=\s*|DC_BACKEND_FIELDS\()\s*"(\w+)"', body)
                if backend:
                    found[backend.group(1)] = {"dir": os.path.relpath(root, REPO), "text": text}
    for backend, d in found.items():
        text, words, literals = d["text"], {backend}, set()
        # The vendor's string macros (NVML_SONAME), for fields given by one.
        macros = {}
        for root, _, names in os.walk(os.path.join(REPO, d["dir"])):
            for name in names:
                macros.update(re.findall(r'^#define (\w+) "([^"]*)"', open(os.path.join(root, name)).read(), re.M))
        for rows in re.findall(r"struct dc_library \w+\[\]\s*=\s*\{(.*?)\};", text, re.S):
            for row in re.findall(r"\{([^{}]*)\}", rows):
                fields = [f.strip() for f in row.split(",")]
                fields = [f[1:-1] if f.startswith('"') else macros.get(f, "") for f in fields]
                if len(fields) >= 3 and all(fields[:3]):
                    words.add(fields[0])
                    literals.add(re.sub(r"\.so(\.\d+)*$", "", fields[1]))
                    literals.add(fields[2])
                else:
                    problems.append("%s: a library row the test cannot read: {%s}" % (backend, row.strip()))
        for rows in re.findall(r"struct dc_visibility \w+\[\]\s*=\s*\{(.*?)\};", text, re.S):
            literals.update(re.findall(r'\{\s*"(\w+)"', rows))
        for root, _, names in os.walk(os.path.join(REPO, d["dir"])):
            for name in names:
                if name.endswith(".h"):
                    for fn in re.findall(r"^\s*X\(([a-z]+)([A-Z_]\w*),", open(os.path.join(root, name)).read(),
                                         re.M):
                        literals.add("".join(fn))
                        words.add(fn[0])
        # "cuda_verify" is the device type's verification, not a vendor word.
        if parts(backend)[0] in DEVICE_TYPES:
            words.discard(backend)
        d["words"] = sorted(w for w in words if w not in DEVICE_TYPES)
        d["literals"] = sorted(literals)
    return found


def product_files():
    for top in PRODUCT:
        for root, _, names in os.walk(os.path.join(REPO, top)):
            for name in sorted(names):
                if name.endswith((".c", ".h", ".py", ".cpp")):
                    yield os.path.relpath(os.path.join(root, name), REPO)


def mentions(text, d, shared):
    """The vendor words and literals text names, in order of appearance;
    none of the literals in shared (another vendor's too, which the file
    may name)."""
    hits = []
    for token in re.findall(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[A-Za-z_][A-Za-z0-9_]*', text):
        if token.startswith(("DMACONN_PROP_", "DMACONN_PLACE_")):
            continue
        words = parts(token)
        hit = [w for w in d["words"] if has_run(words, parts(w))]
        hit += [lit for lit in d["literals"] if lit not in shared and re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(lit),
                                                            token)]
        hits += hit
    return hits


def main():
    problems = []
    found = descriptors(problems)
    for backend, d in sorted(found.items()):
        if not d["dir"].startswith("src/backends/") or d["dir"].count("/") != 2:
            problems.append("%s: its descriptor is in %s, not in a directory of its own under src/backends/"
                            % (backend, d["dir"]))
        if not [lit for lit in d["literals"] if lit.startswith("DMACONN_") and lit.endswith("_LIBRARY")]:
            problems.append("%s: its descriptor names no library" % backend)
    seen = set()
    total = 0
    for path in product_files():
        if path in (TABLE, REPLAY_TABLE, CONNECTIONS, PROPS):
            continue
        raw = open(os.path.join(REPO, path)).read()
        text = strip_py(raw) if path.endswith(".py") else strip_c(raw)
        for backend, d in sorted(found.items()):
            if path.startswith(d["dir"] + "/"):
                continue
            # A variable two runtimes read (HIP reads CUDA_VISIBLE_DEVICES) is
            # each one's.
            shared = {lit for lit in d["literals"]
                      if any(lit in o["literals"] and path.startswith(o["dir"] + "/")
                             for b, o in found.items() if b != backend)}
            hits = mentions(text, d, shared)
            if not hits:
                continue
            total += len(hits)
            seen.add((path, backend))
            if (path, backend) not in KNOWN:
                problems.append("%s names %s outside %s/: %s" % (path, backend, d["dir"],
                                                                 ", ".join(sorted(set(hits))[:8])))
    for key in sorted(set(KNOWN) - seen):
        problems.append("%s no longer names %s: remove it from KNOWN" % key)
    return finish(problems, "%d backends, %d places outside their directories (%d mentions), %d known"
           % (len(found), len(seen), total, len(KNOWN)))


if __name__ == "__main__":
    sys.exit(main())
