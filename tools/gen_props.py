#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes what follows from the property table DMACONN_PROPERTIES
(include/dmaconn_props.h): the DMACONN_PROP_ constants in that file's
generated block, the typed members of docs/dmaconn.schema.json and the
table of properties in docs/json-output.md.

usage: gen_props.py [--check]

With --check nothing is written: exits 1, naming the files, when one
differs from what the table gives (the `props_generated` test).  `make
props` runs it without.  Python 3 standard library only.
"""

import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(REPO, "include", "dmaconn_props.h")
SCHEMA = os.path.join(REPO, "docs", "dmaconn.schema.json")
DOC = os.path.join(REPO, "docs", "json-output.md")
PUBLIC = os.path.join(REPO, "include", "dmaconn.h")

C_STRING = r'"(?:[^"\\]|\\.)*"'
ROW = re.compile(r"X\((\w+), (%s), (\w+), (\w+), (%s), (%s)\)" % (C_STRING, C_STRING, C_STRING))
TYPE_ROW = re.compile(r"X\((\w+), (\d+), (%s), (%s)\)" % (C_STRING, C_STRING))
BEGIN, END = "/* BEGIN GENERATED */\n", "/* END GENERATED */\n"
DOC_BEGIN, DOC_END = "<!-- BEGIN GENERATED: tools/gen_props.py -->\n", "<!-- END GENERATED -->\n"

# Members of the schema's device and pair objects that are not properties
# (or are described by hand): kept as the schema has them, these first.
FIXED_HEAD = {"device": ["ordinal"], "pair": ["from", "to"]}
FIXED_TAIL = {"device": [], "pair": ["reason", "reason_text"]}


def c_string(literal):
    """The value of a C string literal with only \\" and \\\\ escapes."""
    return re.sub(r"\\(.)", r"\1", literal[1:-1])


def table_text(text):
    """The body of DMACONN_PROPERTIES in text."""
    start = text.index("#define DMACONN_PROPERTIES(X)")
    end = text.index("/* clang-format on */", start)
    return text[start:end]


def read_types():
    """{NAME: (name, json type)} from DMACONN_PROPERTY_TYPES in dmaconn.h."""
    with open(PUBLIC) as f:
        text = f.read()
    body = text[text.index("#define DMACONN_PROPERTY_TYPES(X)"):text.index("typedef enum dmaconn_property_type")]
    return {m[0]: (c_string(m[2]), c_string(m[3])) for m in TYPE_ROW.findall(body)}


def read_table():
    """The rows of the table: dicts of name, key, type, scope, unit, doc."""
    with open(HEADER) as f:
        body = table_text(f.read())
    rows = [dict(name=m[0], key=c_string(m[1]), type=m[2], scope=m[3], unit=c_string(m[4]), doc=c_string(m[5]))
            for m in ROW.findall(body)]
    # Every X( of the table must have been read: a row the expression
    # misses would be silently absent from every output.
    if len(rows) != body.count("X("):
        raise SystemExit("gen_props: %d rows read of %d in DMACONN_PROPERTIES" % (len(rows), body.count("X(")))
    types = read_types()
    for r in rows:
        if r["type"] not in types or r["scope"] not in ("DEVICE", "PAIR"):
            raise SystemExit("gen_props: %s: unknown type or scope" % r["name"])
        r["json"] = types[r["type"]][1]
        r["type_name"] = types[r["type"]][0]
    for what in ("name", "key"):
        seen = [r[what] for r in rows]
        if len(seen) != len(set(seen)):
            raise SystemExit("gen_props: a %s appears twice in DMACONN_PROPERTIES" % what)
    return rows


def describe(row):
    return row["doc"] + (" (%s)" % row["unit"] if row["unit"] else "")


def header(rows):
    with open(HEADER) as f:
        text = f.read()
    lines = []
    for r in rows:
        define = '#define DMACONN_PROP_%s "%s"' % (r["name"], r["key"])
        lines.append(define + "\n")
    head, rest = text.split(BEGIN)
    return head + BEGIN + "".join(lines) + rest[rest.index(END):]


def schema(rows):
    with open(SCHEMA) as f:
        doc = json.load(f)
    typed = sorted((r for r in rows if r["json"] != "string"), key=lambda r: r["key"])
    for where in ("device", "pair"):
        old = doc["$defs"][where]["properties"]
        new = {k: old[k] for k in FIXED_HEAD[where]}
        for r in typed:
            new[r["key"]] = {"type": [r["json"], "null"], "description": describe(r)}
            if r["json"] == "array":  # typed cliques: [{"type", "id"}]
                new[r["key"]]["items"] = {
                    "type": "object",
                    "properties": {"type": {"type": "string"}, "id": {"type": "integer", "minimum": 0}},
                    "required": ["type", "id"],
                    "additionalProperties": False,
                }
        new.update({k: old[k] for k in FIXED_TAIL[where]})
        doc["$defs"][where]["properties"] = new
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def doc_table(rows):
    with open(DOC) as f:
        text = f.read()
    out = ["| key | scope | type | JSON | unit | meaning |\n", "| --- | --- | --- | --- | --- | --- |\n"]
    for r in rows:
        out.append("| `%s` | %s | %s | %s | %s | %s |\n" % (r["key"], r["scope"].lower(), r["type_name"], r["json"],
                                                         r["unit"], r["doc"].replace("|", "\\|")))
    head, rest = text.split(DOC_BEGIN)
    return head + DOC_BEGIN + "".join(out) + rest[rest.index(DOC_END):]


def main(argv):
    check = argv[1:] == ["--check"]
    if argv[1:] not in ([], ["--check"]):
        sys.stderr.write(__doc__)
        return 2
    rows = read_table()
    stale = []
    for path, text in ((HEADER, header(rows)), (SCHEMA, schema(rows)), (DOC, doc_table(rows))):
        with open(path) as f:
            if f.read() == text:
                continue
        stale.append(os.path.relpath(path, REPO))
        if not check:
            with open(path, "w") as f:
                f.write(text)
    if check and stale:
        print("gen_props: not what include/dmaconn_props.h gives (run `make props`): " + ", ".join(stale))
        return 1
    print("gen_props: %d properties; %s" % (len(rows), "rewrote " + ", ".join(stale) if stale and not check
                                            else "everything up to date"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
