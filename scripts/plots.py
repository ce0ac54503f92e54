#!/usr/bin/env python3
"""Draws the benchmark page's plots and writes its tables of figures, from the bench's raw output.

    python3 scripts/plots.py            # rewrites docs/bench/plots/*.svg and the generated tables of docs/benchmarks.md
    python3 scripts/plots.py --check    # exit 1 if either is not what the raw outputs give (nothing written)

Reads the raw outputs named in RUNS below: the Markdown a run prints (`java -jar distlock-bench.jar ... | tee
docs/bench/<run>.md`) or the CSV it writes with `--csv docs/bench/<run>.csv`. To put a new run on the page, save its
output under docs/bench/, point RUNS at it and run this script. Every figure in a generated table links to the file
it came from. A figure the harness printed (a ratio, a target line) is taken as printed; any other ratio is computed
from the two rows' figures and says so. Plain SVG, no libraries.
"""
import csv
import html
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "docs", "benchmarks.md")
PLOTS = os.path.join(ROOT, "docs", "bench", "plots")

# run id -> (raw output under docs/bench/, command[, note])
RUNS = {
    "T1": ("2026-11-26T0139-redis.md", "redis --seconds 5"),
    "TU6": ("2026-11-26T020530-redis-uncontended.md", "redis-uncontended --seconds 20"),
    "TU7": ("2026-11-26T020646-redis-uncontended.md", "redis-uncontended --seconds 20"),
    "TK1": ("2026-11-26T011418-redis-keys.md", "redis-keys --seconds 30",
            "other tests started on the machine during its alternating phase"),
    "TK2": ("2026-11-26T020809-redis-keys.md", "redis-keys --seconds 30"),
    "E": ("2026-11-22T0114-all.md", "all --seconds 5", "etcd's one-key figure only"),
    "F": ("2026-11-22T0146-all.md", "all --seconds 5", "etcd's one-key figure only"),
    "I": ("2026-11-22T0238-all.md", "all --seconds 5", "etcd's one-key figure only"),
    "J": ("2026-11-22T0446-all.md", "all --seconds 5"),
    "KZ1": ("2026-11-22T0717-zookeeper.md", "zookeeper --seconds 5"),
    "KZ2": ("2026-11-22T0718-zookeeper.md", "zookeeper --seconds 5"),
    "KZ3": ("2026-11-22T0755-zookeeper.md", "zookeeper --seconds 5"),
}


def number(text):
    text = text.strip().replace(",", "").rstrip("×").strip()
    if text in ("", "–", "-"):
        return None
    if text == "∞":
        return float("inf")
    try:
        return float(text)
    except ValueError:
        return None


class Raw:
    """One raw output: phase rows, printed ratios and target lines, each under its '##' title and '###' section."""

    def __init__(self, run):
        self.run = run
        self.file, self.command = RUNS[run][:2]
        self.note = RUNS[run][2] if len(RUNS[run]) > 2 else ""
        self.path = os.path.join(ROOT, "docs", "bench", self.file)
        self.rows = []  # dicts: title, section, label, ops_per_s, p50_us, ..., measured, met
        self.printed = []  # (title, section, label, value)
        self.tables = []  # (title, section, {column: cell}) of every Markdown table row
        self.machine = ""
        if self.file.endswith(".csv"):
            self._csv()
        else:
            self._markdown()

    def _csv(self):
        with open(self.path, encoding="utf-8") as f:
            for r in csv.DictReader(f):
                for k in ("ops_per_s", "p50_us", "p99_us", "busiest_to_idlest", "measured", "wanted"):
                    r[k] = number(r[k] or "")
                self.rows.append(r)
                if r["kind"] == "target":
                    self.printed.append((r["title"], r["section"], r["label"], r["measured"]))

    def _markdown(self):
        title = section = ""
        header = None
        with open(self.path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if line.startswith("<!--"):
                    continue  # the harness's raw counts between table rows
                if line.startswith("## "):
                    title, section, header = line[3:], "", None
                elif line.startswith("### "):
                    section, header = line[4:], None
                elif line.startswith("- start at ") and not self.machine:
                    self.machine = line[len("- start at "):]
                elif line.startswith("|"):
                    cells = [c.strip() for c in line.strip().strip("|").split("|")]
                    if set(line) <= set("|-: "):
                        continue
                    if header is None:
                        header = cells
                        continue
                    self.tables.append((title, section, dict(zip(header, cells))))
                    if header[0] == "implementation" and "ops/s" in header:
                        col = dict(zip(header, cells))
                        self.rows.append({
                            "kind": "phase", "title": title, "section": section, "label": cells[0],
                            "ops_per_s": number(col.get("ops/s", "")), "p50_us": number(col.get("p50 µs", "")),
                            "p99_us": number(col.get("p99 µs", "")),
                            "busiest_to_idlest": number(col.get("busiest/idlest", "")),
                        })
                    elif header[:2] == ["target", "measured"]:
                        self.printed.append((title, section, cells[0], number(cells[1])))
                    elif len(cells) >= 2 and number(cells[1]) is not None:
                        self.printed.append((title, section, cells[0], number(cells[1])))
                else:
                    header = None
                    # "- Redisson RLock (lockWatchdogTimeout 3 s, tick 1 s): ...: 100.0 requests per round ..."
                    m = re.match(r"- (distlock|Redisson RLock) \((?:lease|lockWatchdogTimeout).*: ([0-9.]+) requests per round", line)
                    if m:
                        self.printed.append((title, "Watchdog", m.group(1), float(m.group(2))))
                    # "- ops/s (alternating slices): distlock ÷ bare 0.89×, distlock ÷ fenced reference 0.98×, ..."
                    m = re.match(r"- ops/s \(alternating slices\): (.*)", line)
                    if m:
                        for part in m.group(1).split(", "):
                            k = re.match(r"(.*) ([0-9.]+)×$", part)
                            if k:
                                self.printed.append((title, "alternating", k.group(1), float(k.group(2))))

    def row(self, title, section, label):
        found = [r for r in self.rows if r["kind"] == "phase" and r["title"].startswith(title)
                 and r["section"].startswith(section) and r["label"] == label]
        if len(found) != 1:
            raise SystemExit(f"{self.file}: {len(found)} rows for {title!r} / {section!r} / {label!r}")
        return found[0]

    def cell(self, title, section, where, column):
        """The one table cell in {column} of the row whose cells include {where}."""
        found = [row[column] for t, s, row in self.tables if t.startswith(title) and s.startswith(section)
                 and all(row.get(k) == v for k, v in where.items())]
        if len(found) != 1:
            raise SystemExit(f"{self.file}: {len(found)} cells for {title!r} / {section!r} / {where} / {column!r}")
        return number(found[0])

    def value(self, title, section, label):
        found = [v for t, s, l, v in self.printed if t.startswith(title) and s.startswith(section) and l == label]
        if len(found) != 1:
            raise SystemExit(f"{self.file}: {len(found)} printed figures for {title!r} / {section!r} / {label!r}")
        return found[0]


RAW = {}


def raw(run):
    if run not in RAW:
        RAW[run] = Raw(run)
    return RAW[run]


class Figure:
    """A number on the page and the raw output it came from."""

    def __init__(self, run, value, unit="×", computed=False):
        self.run, self.value, self.unit, self.computed = run, value, unit, computed

    def md(self):
        if self.value is None:
            return "–"
        text = f"{self.value:.2f}{self.unit}" if self.unit == "×" else f"{self.value:,.0f}{self.unit}"
        mark = "*" if self.computed else ""
        return f"[{text}{mark}](bench/{raw(self.run).file})"


def printed(run, title, section, label):
    return Figure(run, raw(run).value(title, section, label))


def ratio(run, title, section, a, b, column="ops_per_s"):
    r = raw(run)
    x, y = r.row(title, section, a)[column], r.row(title, section, b)[column]
    return Figure(run, x / y, computed=True)


def floor_ratio(run, title, section, label):
    """p50 ÷ the faster of the interleaved PINGs: the harness's floor."""
    r = raw(run)
    pings = [r.row(title, section, p)["p50_us"] for p in ("PING (Lettuce sync)", "PING (Lettuce sync, own resources)")]
    return Figure(run, r.row(title, section, label)["p50_us"] / min(pings), computed=True)


def several(figures):
    return " / ".join(f.md() for f in figures)


# ---------------------------------------------------------------------------------------------------------------
# Redis

R_INTER = "Uncontended, interleaved"
R_FENCED = "fenced reference (Lua SET NX PX + INCR, Lua release)"
R_BARE = "bare SET NX PX + Lua release"


def redis_uncontended(run):
    """Printed 'p50 ÷ floor' table of a redis-uncontended run; T1 prints none, so its ratios are computed."""
    def get(label):
        if run.startswith("TU"):
            return printed(run, "Redis", R_INTER, label)
        return floor_ratio(run, "Redis", R_INTER, label)
    return get


def redis_table():
    own = "fenced reference (a client of its own)"

    def p50(run, a, b):
        r = raw(run)
        return Figure(run, r.row("Redis", R_INTER, a)["p50_us"] / r.row("Redis", R_INTER, b)["p50_us"], computed=True)

    alt = "10,000 keys, 8 threads, one client, in alternating slices"
    uncontended = ("TU6", "TU7")
    rows = [
        ("uncontended lock+unlock (interleaved): distlock's p50 ÷ the other's; lower is better",
         several([printed(r, "Redis", R_INTER, "distlock") for r in uncontended]),
         several([p50(r, "distlock", own) for r in uncontended]),
         several([p50(r, "distlock", "Redisson RLock") for r in uncontended]),
         "–", "≤ 2.1× PING", "**no**: no fenced lock reached it here (below)"),
        ("one key, 8 threads, one client: distlock's ops/s ÷ the other's; higher is better", "", "",
         printed("T1", "Redis", "Targets", "one key, 8 threads, one client: ops/s ÷ Redisson RLock").md(),
         ratio("T1", "Redis", "One key, 8 threads, ONE client", "distlock", "Spring RedisLockRegistry").md(),
         "≥ 3× Redisson", "yes"),
        ("one key, 8 separate clients: distlock's ops/s ÷ the other's", "", "",
         printed("T1", "Redis", "Targets", "one key, 8 clients: ops/s ÷ Redisson RLock").md(),
         ratio("T1", "Redis", "One key, 8 threads, 8 SEPARATE", "distlock", "Spring RedisLockRegistry").md(),
         "≥ 3× Redisson; busiest ÷ idlest thread ≤ 1.5 (" + printed(
             "T1", "Redis", "Targets", "one key, 8 clients: busiest/idlest thread").md() + ")", "yes"),
        ("10,000 keys, 8 threads (alternating slices): distlock's ops/s ÷ the other's; the floor is the bare lock",
         printed("TK2", "Redis", "alternating", "distlock ÷ bare").md(),
         printed("TK2", "Redis", "alternating", "distlock ÷ fenced reference").md(),
         several([printed("TK2", "Redis", "alternating", "distlock ÷ Redisson RLock"),
                  printed("TK1", "Redis", "alternating", "distlock ÷ Redisson RLock"),
                  printed("T1", "Redis", "alternating", "distlock ÷ Redisson RLock")]),
         ratio("T1", "Redis", alt, "distlock", "Spring RedisLockRegistry").md(),
         "≥ 0.95× bare; ≥ 2.5× Redisson", "**no** (bare); borderline (Redisson: 1 run of 3)"),
    ]
    head = ("| scenario | ÷ floor | ÷ fenced reference | ÷ Redisson RLock | ÷ Spring RedisLockRegistry | target | met |\n"
            "| --- | ---: | ---: | ---: | ---: | --- | --- |\n")
    table = head + "\n".join("| " + " | ".join(r) + " |" for r in rows) + "\n"

    t1 = raw("T1")
    per_release = "Commands per release"

    def growth(name):
        one = t1.cell("Redis", per_release, {"implementation": name, "waiters": "1"}, "script calls / release")
        many = t1.cell("Redis", per_release, {"implementation": name, "waiters": "1,000"}, "script calls / release")
        return Figure("T1", many / one, computed=True)

    def count(value):
        return f"[{value:g}](bench/{t1.file})"

    counts = [
        ("Redis commands per re-entrant lock+unlock",
         count(t1.cell("Redis", "Re-entrant", {"implementation": "distlock"},
                       "Redis commands per re-entrant lock()+unlock() (1,000 re-entries)")),
         count(t1.cell("Redis", "Re-entrant", {"implementation": "Redisson RLock"},
                       "Redis commands per re-entrant lock()+unlock() (1,000 re-entries)")), "0", "yes"),
        ("script calls per release, 1,000 waiters ÷ 1 waiter",
         printed("T1", "Redis", "Targets", "script calls per release, 1,000 waiters ÷ 1 waiter (no growth, ±5 %)").md(),
         growth("Redisson RLock").md(),
         "≤ 1.05× (no growth)", "yes"),
        ("watchdog: requests per renewal tick for 10,000 holds", count(t1.value("Redis", "Watchdog", "distlock")),
         count(t1.value("Redis", "Watchdog", "Redisson RLock")), "≤ 10", "yes"),
    ]
    table += ("\n| round trips | distlock | Redisson RLock | target | met |\n| --- | ---: | ---: | --- | --- |\n"
              + "\n".join("| " + " | ".join(r) + " |" for r in counts) + "\n")
    return table


def redis_evidence():
    """The fenced reference beside distlock, in the runs the targets were read from."""
    own = "fenced reference (a client of its own)"

    def floor(label):
        return [printed(run, "Redis", R_INTER, label) for run in ("TU6", "TU7")]

    def like_for_like(run):
        r = raw(run)
        return Figure(run, r.row("Redis", R_INTER, "distlock")["p50_us"] / r.row("Redis", R_INTER, own)["p50_us"],
                      computed=True)

    rows = [
        ("2 × `EVALSHA` of `return 1` (no lock at all), p50 ÷ PING", floor("2 × EVALSHA of `return 1` (Lettuce sync)")),
        ("bare lock (no token), p50 ÷ PING", floor(R_BARE)),
        ("fenced reference on the harness's shared client, p50 ÷ PING", floor(R_FENCED)),
        ("fenced reference on a client of its own, as distlock's, p50 ÷ PING", floor(own)),
        ("distlock, p50 ÷ PING", floor("distlock")),
        ("distlock ÷ the fenced reference on a client of its own, p50", [like_for_like("TU6"), like_for_like("TU7")]),
    ]
    keys = [
        ("10,000 keys: fenced reference ÷ bare lock, ops/s", printed("TK2", "Redis", "alternating", "fenced reference ÷ bare")),
        ("10,000 keys: distlock ÷ fenced reference, ops/s", printed("TK2", "Redis", "alternating",
                                                                     "distlock ÷ fenced reference")),
    ]
    out = ["| in the same run | TU6 | TU7 | TK2 |", "| --- | ---: | ---: | ---: |"]
    out += [f"| {name} | {a.md()} | {b.md()} | |" for name, (a, b) in rows]
    out += [f"| {name} | | | {f.md()} |" for name, f in keys]
    return "\n".join(out) + "\n"


def redis_ladder():
    """Uncontended p50 ÷ floor of every row of TU7: where a fenced lock's two scripts put it."""
    labels = [
        ("PING (Lettuce sync)", "PING, the floor"),
        ("2 × EVALSHA of `return 1` (Lettuce sync)", "2 × EVALSHA of return 1 (no lock)"),
        (R_BARE, "bare SET NX PX lock (no token)"),
        (R_FENCED, "fenced reference, shared client"),
        ("fenced reference (a client of its own)", "fenced reference, own client"),
        ("distlock", "distlock"),
        ("Redisson RLock", "Redisson RLock"),
    ]
    bars = []
    for run in ("TU6", "TU7"):
        for label, name in labels:
            bars.append((name, run, raw(run).value("Redis", R_INTER, label)))
    return bars


# ---------------------------------------------------------------------------------------------------------------
# JDBC, ZooKeeper, etcd

def jdbc_table():
    rows = []
    for db in ("MariaDB", "PostgreSQL"):
        title = "JDBC — " + db
        for scenario, section in (("uncontended", "Uncontended"), ("one key, 8 threads, one client",
                                                                    "One key, 8 threads, one client"),
                                  ("one key, 8 separate clients", "One key, 8 threads, 8 separate"),
                                  ("10,000 keys, 8 threads", "10,000 keys")):
            label = scenario if scenario != "10,000 keys, 8 threads" else "10,000 keys, 8 threads"
            rows.append((db, scenario, printed("J", title, "Ratios", label.replace("one key, 8 separate clients",
                                                                                   "one key, 8 clients")).md()))
    head = "| database | scenario (mode TABLE) | distlock's ops/s ÷ Spring JdbcLockRegistry's |\n| --- | --- | ---: |\n"
    return head + "\n".join(f"| {a} | {b} | {c} |" for a, b, c in rows) + "\n"


def zookeeper_table():
    def t(run, label):
        return printed(run, "ZooKeeper", "Targets", label)

    runs = ("KZ1", "KZ2", "KZ3")
    rows = [
        ("uncontended acquire+release (interleaved): distlock's p50 ÷ the other's; lower is better",
         several([t(r, "uncontended p50 ÷ raw create+delete p50 (interleaved)") for r in runs]),
         several([floor_zk(r, "distlock ZooKeeperLockClient", "Curator InterProcessMutex") for r in runs]),
         "≤ 1.15× the floor", "yes, at the edge"),
        ("one key, 8 threads, one client (alternating slices): distlock's ops/s ÷ the other's", "",
         several([t(r, "one key, 8 threads: ops/s ÷ Curator (alternating slices)") for r in runs]), "≥ 3× Curator",
         "yes"),
        ("10,000 keys, 8 threads (alternating slices): distlock's ops/s ÷ the other's", "",
         several([t(r, "10,000 keys, 8 threads: ops/s ÷ Curator (alternating slices)") for r in runs]), "≥ 2× Curator",
         "yes"),
    ]
    head = ("| scenario | ÷ raw create+delete (the floor) | ÷ Curator InterProcessMutex | target | met |\n"
            "| --- | ---: | ---: | --- | --- |\n")
    return head + "\n".join("| " + " | ".join(r) + " |" for r in rows) + "\n"


def floor_zk(run, a, b):
    r = raw(run)
    s = "Uncontended, interleaved"
    return Figure(run, r.row("ZooKeeper", s, a)["p50_us"] / r.row("ZooKeeper", s, b)["p50_us"], computed=True)


def etcd_table():
    def t(label):
        return printed("J", "etcd", "Targets", label)

    rows = [
        ("uncontended acquire+release (interleaved): distlock's ops/s ÷ the other's; higher is better",
         t("uncontended ops/s ÷ raw put+delete (interleaved)").md(),
         t("uncontended ops/s ÷ raw Txn+delete, the same requests (interleaved)").md(),
         t("uncontended ops/s ÷ jetcd Lock (interleaved)").md(), "≥ 2× jetcd",
         "**no**, and no correct lock can: see below"),
        ("one key, 8 threads, one client: distlock's ops/s ÷ the other's", "", "",
         t("one key, 8 threads: ops/s ÷ jetcd Lock").md(), "≥ 10× jetcd",
         "**no** in J; yes in the three runs before it: "
         + several([printed(r, "etcd", "Targets", "one key, 8 threads: ops/s ÷ jetcd Lock") for r in ("E", "F", "I")])),
    ]
    jetcd = raw("J").row("etcd", "One key, 8 threads, one client", "jetcd Lock (lease per thread, kept alive)")
    wait = Figure("J", jetcd["p50_us"], unit=" µs")
    head = ("| scenario | ÷ raw put+delete (the floor) | ÷ raw Txn+delete (distlock's requests, bare) | ÷ jetcd Lock "
            "(kept-alive lease) | target | met |\n| --- | ---: | ---: | ---: | --- | --- |\n")
    return (head + "\n".join("| " + " | ".join(r) + " |" for r in rows) + "\n\n"
            + f"jetcd's lock+unlock with 8 threads on one key, p50: {wait.md()}.\n")


def runs_table():
    out = ["| run | raw output | command (`java -jar distlock-bench/target/distlock-bench.jar …`) | started (UTC) | "
           "load average | note |", "| --- | --- | --- | --- | ---: | --- |"]
    for run in RUNS:
        r = raw(run)
        m = re.match(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d).*load average ([0-9.]+)", r.machine)
        started, load = (f"{m.group(1)} {m.group(2)}", m.group(3)) if m else (r.machine, "")
        out.append(f"| {run} | [`{r.file}`](bench/{r.file}) | `{r.command}` | {started} | {load} | {r.note} |")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------------------------
# SVG

COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948"]


def bars_svg(title, bars, target=None, target_label="", scale_max=None, unit="×"):
    """Horizontal bars: (name, run, value); bars of one name are grouped, one colour per run."""
    names, runs = [], []
    for name, run, _ in bars:
        if name not in names:
            names.append(name)
        if run not in runs:
            runs.append(run)
    values = {(n, r): v for n, r, v in bars}
    top = scale_max or max(v for _, _, v in bars) * 1.15
    left, width, bar_h, gap = 300, 420, 11, 8
    height = 46 + len(names) * (len(runs) * bar_h + gap) + 30
    x = lambda v: left + min(v, top) / top * width
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 70}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="100%" height="100%" fill="white"/>',
           f'<text x="10" y="18" font-size="13">{html.escape(title)}</text>']
    y = 34
    for n in names:
        block = len(runs) * bar_h
        out.append(f'<text x="{left - 6}" y="{y + block / 2 + 4:.1f}" text-anchor="end">{html.escape(n)}</text>')
        for j, run in enumerate(runs):
            v = values.get((n, run))
            if v is None:
                continue
            out.append(f'<rect x="{left}" y="{y + j * bar_h}" width="{x(v) - left:.1f}" height="{bar_h - 1}" '
                       f'fill="{COLORS[j % len(COLORS)]}"/>')
            out.append(f'<text x="{x(v) + 3:.1f}" y="{y + j * bar_h + bar_h - 2}" font-size="9">{v:.2f}{unit}</text>')
        y += block + gap
    if target is not None:
        out.append(f'<line x1="{x(target):.1f}" x2="{x(target):.1f}" y1="28" y2="{y}" stroke="black" '
                   f'stroke-width="1.5" stroke-dasharray="4 2"/>')
        out.append(f'<text x="{x(target) + 3:.1f}" y="{y + 12}">{html.escape(target_label)}</text>')
    for j, run in enumerate(runs):
        out.append(f'<rect x="{10 + j * 90}" y="{height - 16}" width="10" height="10" fill="{COLORS[j % len(COLORS)]}"/>')
        out.append(f'<text x="{24 + j * 90}" y="{height - 7}">{html.escape(run)}</text>')
    out.append(f'<text x="{left + width + 60}" y="{height - 7}" text-anchor="end" font-size="9">axis capped at '
               f'{top:g}{unit}</text>' if scale_max else "")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def targets_svg():
    """distlock's figure ÷ its target, per backend: past 1.0 the target is met."""
    items = [
        ("Redis uncontended p50 ÷ PING (≤ 2.1)", "TU7", 2.1 / raw("TU7").value("Redis", R_INTER, "distlock")),
        ("Redis one key 1 client ÷ Redisson (≥ 3)", "T1",
         raw("T1").value("Redis", "Targets", "one key, 8 threads, one client: ops/s ÷ Redisson RLock") / 3),
        ("Redis one key 8 clients ÷ Redisson (≥ 3)", "T1",
         raw("T1").value("Redis", "Targets", "one key, 8 clients: ops/s ÷ Redisson RLock") / 3),
        ("Redis 10,000 keys ÷ bare lock (≥ 0.95)", "TK2",
         raw("TK2").value("Redis", "alternating", "distlock ÷ bare") / 0.95),
        ("Redis 10,000 keys ÷ Redisson (≥ 2.5)", "TK2",
         raw("TK2").value("Redis", "alternating", "distlock ÷ Redisson RLock") / 2.5),
        ("ZooKeeper uncontended ÷ raw (≤ 1.15)", "KZ3",
         1.15 / raw("KZ3").value("ZooKeeper", "Targets", "uncontended p50 ÷ raw create+delete p50 (interleaved)")),
        ("ZooKeeper one key ÷ Curator (≥ 3)", "KZ3",
         raw("KZ3").value("ZooKeeper", "Targets", "one key, 8 threads: ops/s ÷ Curator (alternating slices)") / 3),
        ("ZooKeeper 10,000 keys ÷ Curator (≥ 2)", "KZ3",
         raw("KZ3").value("ZooKeeper", "Targets", "10,000 keys, 8 threads: ops/s ÷ Curator (alternating slices)") / 2),
        ("etcd uncontended ÷ jetcd (≥ 2)", "J",
         raw("J").value("etcd", "Targets", "uncontended ops/s ÷ jetcd Lock (interleaved)") / 2),
        ("etcd one key ÷ jetcd (≥ 10)", "J", raw("J").value("etcd", "Targets", "one key, 8 threads: ops/s ÷ jetcd Lock") / 10),
    ]
    # one colour: the legend names the measure once
    bars = [(f"{name}, {run}", "distlock's figure ÷ the target (over 1: met)", v) for name, run, v in items]
    return bars_svg("Each target: distlock's figure ÷ the target (p50 targets inverted); 1.0 = met exactly", bars,
                    target=1.0, target_label="target", scale_max=4.0)


def jdbc_svg():
    bars = []
    for db in ("MariaDB", "PostgreSQL"):
        for scenario in ("uncontended", "one key, 8 threads, one client", "one key, 8 clients", "10,000 keys, 8 threads"):
            bars.append((scenario, db, raw("J").value("JDBC — " + db, "Ratios", scenario)))
    return bars_svg("JDBC (mode TABLE), run J: distlock's ops/s ÷ Spring JdbcLockRegistry's", bars, target=1.0,
                    target_label="as fast as Spring")


def outputs():
    svgs = {
        "jdbc.svg": jdbc_svg(),
        "redis-uncontended.svg": bars_svg(
            "Redis, uncontended lock+unlock: p50 ÷ the floor (PING), interleaved, runs TU6 and TU7",
            redis_ladder(), target=2.1, target_label="target for distlock: 2.1×"),
        "targets.svg": targets_svg(),
    }
    blocks = {
        "runs": runs_table(),
        "redis": redis_table(),
        "redis-evidence": redis_evidence(),
        "jdbc": jdbc_table(),
        "zookeeper": zookeeper_table(),
        "etcd": etcd_table(),
    }
    return svgs, blocks


def main():
    check = "--check" in sys.argv[1:]
    svgs, blocks = outputs()
    stale = []
    os.makedirs(PLOTS, exist_ok=True)
    for name, text in svgs.items():
        path = os.path.join(PLOTS, name)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != text:
            stale.append(path)
            if not check:
                open(path, "w", encoding="utf-8").write(text)
    page = open(PAGE, encoding="utf-8").read()
    new = page
    for name, text in blocks.items():
        pattern = re.compile(rf"(<!-- figures:{name} -->\n).*?(<!-- /figures:{name} -->)", re.S)
        if not pattern.search(new):
            raise SystemExit(f"{PAGE}: no <!-- figures:{name} --> ... <!-- /figures:{name} --> block")
        new = pattern.sub(lambda m: m.group(1) + text + m.group(2), new)
    if new != page:
        stale.append(PAGE)
        if not check:
            open(PAGE, "w", encoding="utf-8").write(new)
    if check and stale:
        print("not what the raw outputs give (run python3 scripts/plots.py):", *stale, sep="\n  ")
        sys.exit(1)
    print(("up to date: " if check else "written: ") + ", ".join(os.path.relpath(p, ROOT) for p in
          [os.path.join(PLOTS, n) for n in svgs] + [PAGE]))


if __name__ == "__main__":
    main()
