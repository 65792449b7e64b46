#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The multi-node merge exists once: src/merge.c (dmaconn_merge()), which
libdmaconn_mpi and Python's global_matrix() call.  Fails when a second one
appears in product code (src, tools, replay, python/dmaconn):

- the merge's own words (its warnings) are written in one file only;
- no other file reads the facts the cross-node rule looks at, except where
  the library discovers them (src/backends/) or declares them (the property
  table, include/);
- libdmaconn_mpi reads no device property and Python's multi-node module
  applies no rule: both hand the records to dmaconn_merge().

usage: merge_once_test.py [REPO]   (default: this tree)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Report  # noqa: E402

HOME = "src/merge.c"
# What only a merge says (its warnings), as written in the source.
WORDS = ["contributed by more than one rank", "but neither saw both", "its contribution cannot be read",
         "it contributes no devices", "detecting every device of its node failed",
         "its node is not ready for IMEX", "is in no multi-node NVLink domain",
         "its GPUs are 0 in"]
# The facts of the cross-node rule, by key and by constant.
FACTS = (r"\b(fabric_state|fabric_status|cluster_uuid|clique_id|multicast_clique_id|FABRIC_STATE|FABRIC_STATUS|"
         r"CLUSTER_UUID|CLIQUE_ID|MULTICAST_CLIQUE_ID)\b")
# Where those facts may be named: the merge, discovery, the declarations,
# and the outputs that print them as they are (no rule).
FACT_PLACES = (HOME, "src/backends/", "include/", "src/model/", "src/props.c", "tools/format_dot.c",
               "tools/format_nfd.c", "tools/topo.c", "replay/",
               # Slurm blocks from --json documents of many nodes (no matrix):
               # it reads the facts to ask dmaconn_nvlink_domain(), the
               # merge's rule (checked below and by nvlink_domain_test.py).
               "tools/format_slurm_topology.c")
# "abc "\n  f"def" (C or Python) reads as "abc def".
JOINED = re.compile(r"([\"'])\s*\n\s*f?\1")


def product_files(repo):
    for top in ("src", "tools", "replay", os.path.join("python", "dmaconn")):
        for base, _, files in os.walk(os.path.join(repo, top)):
            for name in files:
                if name.endswith((".c", ".h", ".py")):
                    path = os.path.join(base, name)
                    yield os.path.relpath(path, repo), path


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    report = Report()
    texts = {}
    for rel, path in product_files(repo):
        with open(path, encoding="utf-8", errors="replace") as f:
            texts[rel] = JOINED.sub("", f.read())
    for words in WORDS:
        where = sorted(rel for rel, text in texts.items() if words in text)
        report.check(where == [HOME], "%r is written in %s only" % (words, HOME), "found in %s" % where)
    strays = sorted(rel for rel, text in texts.items()
                    if re.search(FACTS, text) and not rel.startswith(FACT_PLACES))
    report.check(not strays, "the cross-node rule's facts are read nowhere else", "named in %s" % strays)
    mpi = texts.get("src/mpi/dmaconn_mpi.c", "")
    report.check("DMACONN_PROP_" not in mpi and "dmaconn_merge(" in mpi,
                 "libdmaconn_mpi reads no property and calls dmaconn_merge()")
    py = texts.get(os.path.join("python", "dmaconn", "_multinode.py"), "")
    report.check("dmaconn_merge" in py and not re.search(r"\bmatrix\[\w+\]\[\w+\] *=", py),
                 "Python's global_matrix() calls dmaconn_merge() and writes no matrix entry")
    slurm = texts.get("tools/format_slurm_topology.c", "")
    report.check("dmaconn_nvlink_domain(" in slurm and not re.search(r"strcmp\((state|status|clique|cluster)\b", slurm),
                 "the Slurm blocks ask the merge's domain rule and compare no fabric fact themselves")
    calls = sorted(rel for rel, text in texts.items()
                   if "dc_switch_between(" in text and rel not in ("src/linkmatrix.c", "src/linkmatrix.h"))
    report.check(set(calls) <= {HOME, "src/backends/nvml/nvml.c"},
                 "the NVSwitch rule is applied by the NVML view and the merge only", "called in %s" % calls)
    return report.done()


if __name__ == "__main__":
    sys.exit(main())
