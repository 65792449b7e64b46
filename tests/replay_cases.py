# SPDX-License-Identifier: BSD-3-Clause
"""The replay cases' one format and checker: a case is a JSON object that
says what `dmaconn -d TYPE -c CONNECTION --json` must print for a machine
(tests/cases.json: cuda, tests/topologies-rocm/cases.json: rocm,
tests/topologies-xpu/cases.json: xpu; the runners run_cases.py,
run_rocm_cases.py and test_xpu.py build the environment, this module checks
the result).  Keys:

  name, topology (a replay file, from the source root) or live (true),
  connection, env ({VAR: value}, null unsets; a runner may add its own)
  n                 the number of devices
  matrix            the exact matrix (null or absent: not compared), or
  matrix_fill       the value of every off-diagonal entry
  warning_count     the number of warnings (default: that of warnings_equal, else 0)
  warnings_equal    the exact warnings, in order
  warnings_contain  substrings, each found in some warning (case-insensitive)
  devices           per ordinal, the expected values of the listed device
                    properties (null skips a device)
  device_keys       the keys every device devices lists has (default: name,
                    pci_bus_id and uuid)
  no_device_keys    keys absent from every device
  pairs             [{"from": I, "to": J, KEY: VALUE, ...}]: the pair exists
                    and holds these values; "no_pair_keys" inside: keys it lacks
  pairs_exact       true: each listed pair holds nothing else (reasons aside)
  no_pairs          [[I, J], ...]: pairs the result describes nothing of
                    (reasons aside)
  no_pair_keys      keys absent from every pair
  pair_count        the number of pairs the result lists
  why               a comment

and always: every zero off the diagonal has a reason and a text, no pair
with a value has one (but cuda/nvlink's nvlink_down for links lost), and
the warnings on standard error are the result's (none under DMACONN_QUIET).
"""
import json

WARN_PREFIX = "dmaconn: warning: "
REASON_KEYS = ("reason", "reason_text")
KEYS = {"name", "topology", "live", "connection", "env", "n", "matrix", "matrix_fill", "warning_count",
        "warnings_equal", "warnings_contain", "devices", "device_keys", "no_device_keys", "pairs", "pairs_exact",
        "no_pairs", "no_pair_keys", "pair_count", "why"}


def load(path, extra_keys=()):
    """The cases of a file, each checked for unknown keys and a coherent shape."""
    with open(path) as f:
        cases = json.load(f)
    names = set()
    for c in cases:
        problems = validate(c, set(extra_keys))
        if c.get("name") in names:
            problems.append("a second case of that name")
        names.add(c.get("name"))
        if problems:
            raise ValueError("%s: case %r: %s" % (path, c.get("name"), "; ".join(problems)))
    return cases


def validate(case, extra_keys=frozenset()):
    """What is wrong with a case's own shape (before anything runs)."""
    problems = ["unknown key %r" % k for k in sorted(set(case) - KEYS - set(extra_keys))]
    if "name" not in case or "n" not in case:
        problems.append("no name or n")
        return problems
    n = case["n"]
    if "matrix" in case and "matrix_fill" in case:
        problems.append("both matrix and matrix_fill")
    m = case.get("matrix")
    if m is not None and (len(m) != n or any(len(r) != n for r in m) or any(m[i][i] for i in range(n))):
        problems.append("matrix is not %dx%d with a zero diagonal" % (n, n))
    devs = case.get("devices")
    if devs is not None and len(devs) != n:
        problems.append("%d devices listed for n=%d" % (len(devs), n))
    if "warnings_equal" in case and len(case["warnings_equal"]) != warning_count(case):
        problems.append("warning_count %d but %d warnings_equal" % (warning_count(case),
                                                                     len(case["warnings_equal"])))
    for exp in case.get("pairs", []):
        i, j = exp.get("from"), exp.get("to")
        if not (isinstance(i, int) and isinstance(j, int) and 0 <= i < n and 0 <= j < n and i != j):
            problems.append("pair %r -> %r is not two distinct ordinals below %d" % (i, j, n))
        scalars = (str, int, float, bool, type(None))
        if any(not isinstance(v, scalars) for k, v in exp.items() if k != "no_pair_keys"):
            problems.append("pair %r -> %r: values are not JSON scalars" % (i, j))
    return problems


def warning_count(case):
    return case.get("warning_count", len(case.get("warnings_equal", [])))


def expected_matrix(case):
    if "matrix_fill" in case:
        n = case["n"]
        return [[0 if i == j else case["matrix_fill"] for j in range(n)] for i in range(n)]
    return case.get("matrix")


def fmt_matrix(m, indent="    "):
    if not isinstance(m, list) or not m:
        return indent + repr(m)
    cells = [[json.dumps(x) for x in row] if isinstance(row, list) else [repr(row)] for row in m]
    width = max((len(c) for row in cells for c in row), default=1)
    return "\n".join(indent + "[" + " ".join(c.rjust(width) for c in row) + "]" for row in cells)


def matrix_diff(expected, got):
    lines = ["matrix differs:", "  expected:", fmt_matrix(expected), "  got:", fmt_matrix(got)]
    if (isinstance(got, list) and len(got) == len(expected)
            and all(isinstance(r, list) and len(r) == len(expected) for r in got)):
        bad = ["(%d,%d): expected %s, got %s" % (i, j, expected[i][j], got[i][j])
               for i in range(len(expected)) for j in range(len(expected)) if expected[i][j] != got[i][j]]
        if bad:
            lines.append("  cells: " + "; ".join(bad[:8]) + (" ..." if len(bad) > 8 else ""))
    return "\n".join(lines)


def listed(items):
    return "".join("\n    - " + w for w in items) or " (none)"


def check(case, obj, stderr, device_type, quiet):
    """The problems of a result (one of the JSON document's "results") and
    the CLI's standard error against a case; [] when it holds."""
    problems = []
    n = case["n"]
    conn = case.get("connection")
    if obj.get("device_type") != device_type or obj.get("connection_type") != conn:
        problems.append("result is %s/%s, expected %s/%s" % (obj.get("device_type"), obj.get("connection_type"),
                                                             device_type, conn))
    m = obj.get("matrix")
    if not isinstance(m, list) or not all(isinstance(r, list) for r in m):
        problems.append("matrix missing or not a list of lists: %r" % (m,))
        m = None
    else:
        if len(m) != n or any(len(r) != n for r in m):
            problems.append("matrix is not %dx%d (rows: %s)" % (n, n, [len(r) for r in m]))
        if not all(isinstance(x, int) and not isinstance(x, bool) for r in m for x in r):
            problems.append("matrix holds non-integers")
        want = expected_matrix(case)
        if want is not None and m != want:
            problems.append(matrix_diff(want, m))
    check_devices(case, obj, problems)
    check_warnings(case, obj, stderr, quiet, problems)
    check_pairs(case, obj, problems)
    if m is not None:
        check_reasons(obj, m, device_type == "cuda" and conn == "nvlink", problems)
    return problems


def check_devices(case, obj, problems):
    devs = obj.get("devices")
    if not isinstance(devs, list) or not all(isinstance(d, dict) for d in devs):
        problems.append("devices missing or not a list of objects: %r" % (devs,))
        return
    n, exp_devs = case["n"], case.get("devices")
    if len(devs) != n:
        problems.append("devices has %d entries, expected %d" % (len(devs), n))
    for i, d in enumerate(devs):
        # "ordinal" always; the identity keys wherever the case knows the device
        # (the library sets them "where known": not when the vendor library was unusable).
        known = exp_devs is not None and i < len(exp_devs) and exp_devs[i] is not None
        identity = case.get("device_keys", ("name", "pci_bus_id", "uuid")) if known else ()
        missing = [k for k in ("ordinal",) + tuple(identity) if k not in d]
        if missing:
            problems.append("devices[%d] lacks %s" % (i, ", ".join(missing)))
        if "ordinal" in d and d["ordinal"] != i:
            problems.append("devices[%d].ordinal is %r" % (i, d["ordinal"]))
        for k in case.get("no_device_keys", []):
            if k in d:
                problems.append("devices[%d] has %s=%r, expected none" % (i, k, d[k]))
    for i, e in enumerate(exp_devs or []):
        if e is None or i >= len(devs):
            continue
        for k, v in e.items():
            if devs[i].get(k) != v:
                problems.append("devices[%d].%s: expected %r, got %r" % (i, k, v, devs[i].get(k)))


def check_warnings(case, obj, stderr, quiet, problems):
    warns = obj.get("warnings")
    if not isinstance(warns, list) or not all(isinstance(w, str) for w in warns):
        problems.append("warnings missing or not a list of strings: %r" % (warns,))
        return
    if len(warns) != warning_count(case):
        problems.append("%d warnings, expected %d:%s" % (len(warns), warning_count(case), listed(warns)))
    for sub in case.get("warnings_contain", []):
        if not any(sub.lower() in w.lower() for w in warns):
            problems.append("no warning contains %r; warnings:%s" % (sub, listed(warns)))
    if "warnings_equal" in case and warns != case["warnings_equal"]:
        problems.append("warnings differ:\n  expected:%s\n  got:%s" % (listed(case["warnings_equal"]), listed(warns)))
    lines = [l[len(WARN_PREFIX):] for l in stderr.splitlines() if l.startswith(WARN_PREFIX)]
    if quiet and lines:
        problems.append("stderr has %d warnings under DMACONN_QUIET:%s" % (len(lines), listed(lines)))
    elif not quiet and lines != warns:
        problems.append("stderr warnings differ from the result's:\n  stderr:%s\n  result:%s"
                        % (listed(lines), listed(warns)))


def fmt_pair(p):
    return "%s -> %s" % (p.get("from"), p.get("to"))


def check_pairs(case, obj, problems):
    got = obj.get("pairs", [])
    if not isinstance(got, list) or not all(isinstance(p, dict) for p in got):
        problems.append("pairs is not a list of objects: %r" % (got,))
        return
    by_pair = {}
    for p in got:
        if (p.get("from"), p.get("to")) in by_pair:
            problems.append("pair %s is listed twice" % fmt_pair(p))
        by_pair[(p.get("from"), p.get("to"))] = p
    if "pair_count" in case and len(got) != case["pair_count"]:
        problems.append("%d pairs, expected %d: %s" % (len(got), case["pair_count"],
                                                       ", ".join(fmt_pair(p) for p in got) or "(none)"))
    for key in case.get("no_pair_keys", []):
        holders = [fmt_pair(p) for p in got if key in p]
        if holders:
            problems.append("pair key %r present, expected on no pair: %s" % (key, ", ".join(holders)))
    for exp in case.get("pairs", []):
        name = fmt_pair(exp)
        p = by_pair.get((exp["from"], exp["to"]))
        if p is None:
            problems.append("no pair %s in the result" % name)
            continue
        for k, v in exp.items():
            if k in ("from", "to", "no_pair_keys"):
                continue
            if k not in p:
                problems.append("pair %s lacks %r (expected %r)" % (name, k, v))
            elif p[k] != v:
                problems.append("pair %s: %s is %r, expected %r" % (name, k, p[k], v))
        for k in exp.get("no_pair_keys", []):
            if k in p:
                problems.append("pair %s has %r = %r, expected absent" % (name, k, p[k]))
        if case.get("pairs_exact"):
            extra = sorted(set(p) - set(exp) - {"from", "to"} - set(REASON_KEYS))
            if extra:
                problems.append("pair %s holds %s too" % (name, ", ".join("%s=%r" % (k, p[k]) for k in extra)))
    for i, j in case.get("no_pairs", []):
        p = by_pair.get((i, j), {})
        said = {k: v for k, v in p.items() if k not in ("from", "to") + REASON_KEYS}
        if said:
            problems.append("pair %d -> %d described, expected nothing: %s" % (i, j, said))


def check_reasons(obj, m, thinned_ok, problems):
    """Every zero off the diagonal has a reason and a text; a pair with a
    value has none (but nvlink_down where links were lost, thinned_ok)."""
    by_pair = {(p.get("from"), p.get("to")): p for p in obj.get("pairs", []) if isinstance(p, dict)}
    for i, row in enumerate(m):
        for j, value in enumerate(row):
            if i == j or not isinstance(value, int):
                continue
            p = by_pair.get((i, j), {})
            has = bool(p.get("reason")) and bool(p.get("reason_text"))
            if value == 0 and not has:
                problems.append("pair %d -> %d is 0 without a reason and a text" % (i, j))
            elif value != 0 and ("reason" in p or "reason_text" in p) and not (
                    thinned_ok and p.get("reason") == "nvlink_down" and has):
                problems.append("pair %d -> %d: value %d with the reason %r" % (i, j, value, p.get("reason")))
