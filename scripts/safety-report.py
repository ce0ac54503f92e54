#!/usr/bin/env python3
"""Regenerates the results section of docs/safety.md from the safety suite's result files.

Usage: scripts/safety-report.py [--merge] RESULTS_DIR DOC

Each scenario run writes RESULTS_DIR/<scenario>--<backend>.json (see ScenarioResult.java). This script rewrites the
part of DOC between the markers <!-- results:begin --> and <!-- results:end --> with:
  1. a matrix of scenarios x backends (verdict per cell),
  2. one row per scenario and backend with every property, the takeover and loss-detection times, the requests the
     fence refused, the leftovers and the raw overlaps (the DOC figures).

With --merge, the rows DOC already has for a scenario and backend that RESULTS_DIR has no result for are kept as they
are (their matrix cell, their property row and their line among the failed MUST properties), so a run of one backend
or one tier updates its own rows and leaves the others' alone.
"""
import glob
import json
import os
import re
import sys

BACKENDS = ["redis", "redis-sentinel", "redis-cluster", "zookeeper", "etcd",
            "mariadb", "mariadb-advisory", "mariadb-row-lock", "postgresql", "postgresql-advisory", "postgresql-row-lock",
            "h2", "redlock"]
PROPS = ["S1", "S2", "S3", "S4", "L1", "L3", "L4", "L5", "LIN"]
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def mark(p):
    """One property's cell: verdict, with the expectation when it is not MUST."""
    status, expect, measure = p["status"], p["expect"], p["measure"]
    symbol = {"PASS": "pass", "FAIL": "FAIL", "MEASURED": "", "NOT_APPLICABLE": "–", "UNKNOWN": "?",
              "NOT_RUN": "not run"}[status]
    if status == "MEASURED":
        return str(measure)
    if status == "NOT_RUN":
        return symbol
    if expect == "DOC" and status in ("PASS", "FAIL"):
        return "doc: " + ("held" if status == "PASS" else "broke")
    if expect == "SHOULD" and status == "FAIL":
        return "should: broke"
    if expect == "SKIP" and status in ("PASS", "FAIL"):
        return "(" + symbol + ")"
    return symbol


def l6(p):
    """The L6 cell (held by nobody while asked for): verdict and the longest such stretch; blank before L6 existed."""
    q = p.get("L6")
    if q is None:
        return ""
    return mark(q) + ("" if q["measure"] is None else ", " + ms(q["measure"]))


def ms(v):
    return "–" if v is None else ("%.1f s" % (v / 1000.0))


ORDER = ["G1", "G3", "G5", "Z4", "R4", "X1", "C4", "E2", "J1", "G2", "G4", "G7", "G8a", "G8b",
         "G9-nopersist", "G9-everysec", "G9-always", "G9-delayed", "R2", "R1-volatile", "R1-allkeys", "Z1", "Z2", "E3",
         "E4", "SF", "C1", "C2", "C3", "G11", "K1", "J4", "J4-stop", "J5", "K2", "X4", "X2", "X6", "G10", "G10k", "E5", "E7",
         "J3", "G6", "R5a-sleep", "R5a-pause-all", "R5a-pause-write", "R5b-sleep", "R5b-pause-all", "R5b-pause-write",
         "Z5", "Z6a", "Z6b", "G9-majority", "G9-cluster", "G9-cluster-long", "S1", "S1-acks", "J6",
         "Z3", "Z3-leader", "Z3-in", "Z3-out", "Z3-leader-in", "Z3-leader-out", "Z3-link", "Z3-minority",
         "Z3-minority-holder", "E6", "E6-leader", "E6-in", "E6-out", "E6-leader-in", "E6-leader-out", "E6-link",
         "E6-minority", "E6-minority-holder", "S2", "S2-minreplicas", "LPm", "LPM", "L1r", "L1r-delayed", "L2r", "L3r",
         "L4r",
         "BROKEN"]


def order(r):
    sid = r["scenario"]
    return (ORDER.index(sid) if sid in ORDER else len(ORDER) - 1, sid,
            BACKENDS.index(r["backend"]) if r["backend"] in BACKENDS else 99)


def row_cells(line):
    """The cells of a Markdown table row."""
    return [c.strip() for c in line.strip().strip("|").split("|")]


MATRIX_ROW = re.compile(r"^(\S+) (.*)$")


def previous(section):
    """The rows of an earlier generated section, by (scenario, backend): each one's matrix cell, title, tier, property
    row and failure line, as generated."""
    kept = {}
    lines = section.splitlines()
    matrix_backends, in_matrix, in_props = None, False, False
    for line in lines:
        if line.startswith("### "):
            in_matrix = line == "### Scenarios x backends"
            in_props = line == "### Every property"
            continue
        if not line.startswith("|") or line.startswith("| ---"):
            m = re.match(r"^- (\S+) on (\S+) \(seed", line)
            if m:
                kept.setdefault((m.group(1), m.group(2)), {})["failure"] = line
            continue
        c = row_cells(line)
        if in_matrix:
            if c[0] == "scenario":
                matrix_backends = c[2:]
                continue
            m = MATRIX_ROW.match(c[0])
            sid, title = m.group(1), m.group(2)
            for b, cell in zip(matrix_backends, c[2:]):
                if cell:
                    kept.setdefault((sid, b), {}).update({"cell": cell, "title": title, "tier": "tier" + c[1]})
        elif in_props and c[0] != "scenario":
            kept.setdefault((c[0], c[1]), {})["row"] = line
    return {k: v for k, v in kept.items() if "cell" in v and "row" in v}


def main():
    args = sys.argv[1:]
    merge = "--merge" in args
    args = [a for a in args if a != "--merge"]
    results_dir, doc = args[0], args[1]
    rows = []
    for f in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
        with open(f, encoding="utf-8") as fh:
            rows.append(json.load(fh))
    if not rows:
        sys.exit("safety-report: no scenario results in %s; %s left as it is" % (results_dir, doc))
    with open(doc, encoding="utf-8") as fh:
        text = fh.read()
    if BEGIN not in text or END not in text:
        sys.exit("safety-report: %s lacks the %s / %s markers" % (doc, BEGIN, END))
    if merge:
        fresh = {(r["scenario"], r["backend"]) for r in rows}
        for (sid, b), old in previous(text.split(BEGIN, 1)[1].split(END, 1)[0]).items():
            if (sid, b) not in fresh:
                rows.append({"scenario": sid, "backend": b, "title": old["title"], "tier": old["tier"],
                             "kept": old})
    rows.sort(key=order)
    backends = [b for b in BACKENDS if any(r["backend"] == b for r in rows)]
    backends += sorted({r["backend"] for r in rows} - set(backends))

    out = [BEGIN, ""]
    kept = sum(1 for r in rows if "kept" in r)
    out.append("Generated by `scripts/faults.sh --report` from %d scenario runs%s. "
               "`pass`/`FAIL`: a MUST property; `doc: held`/`doc: broke`: a property the backend cannot keep by design "
               "under this fault (recorded, not asserted); `should: broke`: a SHOULD property (L6) that failed, a likely "
               "library defect to look into (reported, not asserted); `–`: nothing to judge; blank cell: scenario not run on that "
               "backend (see the notes below the tables)." % (
                   len(rows), ": %d from the last run's result files, %d kept from the page's earlier tables by `--merge`" % (
                       len(rows) - kept, kept) if kept else ""))
    out.append("")
    out.append("### Scenarios x backends")
    out.append("")
    out.append("| scenario | tier | " + " | ".join(backends) + " |")
    out.append("| --- | --- | " + " | ".join("---" for _ in backends) + " |")
    # one row per scenario id; a title that names a backend's own figures (G8b's stop is twice that backend's
    # expiry) is the first backend's
    scenarios = []
    for r in rows:
        if not any(sid == r["scenario"] for sid, _, _ in scenarios):
            scenarios.append((r["scenario"], r["title"], r["tier"]))
    for sid, title, tier in scenarios:
        cells = []
        for b in backends:
            r = next((x for x in rows if x["scenario"] == sid and x["backend"] == b), None)
            if r is None:
                cells.append("")
            elif "kept" in r:
                cells.append(r["kept"]["cell"])
            elif sid == "BROKEN":
                cells.append("caught" if not r["passed"] else "NOT CAUGHT")
            else:
                docs = [p for p in PROPS if r["properties"][p]["expect"] == "DOC"
                        and r["properties"][p]["status"] == "FAIL"]
                should = [p for p in sorted(r["properties"]) if r["properties"][p]["expect"] == "SHOULD"
                          and r["properties"][p]["status"] == "FAIL"]
                cells.append(("pass" if r["passed"] else "**FAIL**") + (" (doc: " + ",".join(docs) + ")" if docs else "")
                             + (" (should: " + ",".join(should) + ")" if should else ""))
        out.append("| %s %s | %s | %s |" % (sid, title, tier[-1], " | ".join(cells)))
    out.append("")
    out.append("### Every property")
    out.append("")
    out.append("| scenario | backend | verdict | " + " | ".join(PROPS) +
               " | takeover (L1) | loss told (L5) | refused by the fence | raw overlaps (S4) | leftovers | seed"
               " | L6 idle while asked for |")
    out.append("| --- | --- | --- | " + " | ".join("---" for _ in PROPS) + " | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if "kept" in r:
            out.append(r["kept"]["row"])
            continue
        p = r["properties"]
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["scenario"], r["backend"],
            ("expected FAIL, caught" if not r["passed"] else "NOT CAUGHT") if r["scenario"] == "BROKEN"
            else ("pass" if r["passed"] else "**FAIL**"),
            " | ".join(mark(p[x]) for x in PROPS),
            ms(p["L1"]["measure"]), ms(p["L5"]["measure"]),
            r.get("refusedRequests", "–"), r.get("rawOverlaps", "–"),
            p["L4"]["measure"] if p["L4"]["measure"] is not None else "–",
            r["seed"], l6(p)))
    failures = [r["kept"]["failure"] if "kept" in r
                else "- %s on %s (seed %s): %s" % (r["scenario"], r["backend"], r["seed"], r["failure"])
                for r in rows
                if ("kept" in r and "failure" in r["kept"])
                or ("kept" not in r and not r["passed"] and r["scenario"] != "BROKEN")]
    if failures:
        out.append("")
        out.append("### Failed MUST properties")
        out.append("")
        out.extend(failures)
    out.append("")
    out.append(END)

    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(doc, "w", encoding="utf-8") as fh:
        fh.write(head + "\n".join(out) + tail)
    print("safety-report: %d runs, %d backends -> %s" % (len(rows), len(backends), doc))


if __name__ == "__main__":
    main()
