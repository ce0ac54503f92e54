#!/usr/bin/env python3
"""Draws docs/bench/targets.svg: each ratio target of the benchmark report, one bar per run, and the target line.

Usage: python3 docs/bench/plot_targets.py docs/bench/<run>.md ... > docs/bench/targets.svg
Reads the "| target | measured | wanted | verdict |" tables the harness prints; plain SVG, no libraries.
"""
import re
import sys

runs = sys.argv[1:]
rows = {}  # target -> (wanted, comparator, [measured per run])
order = []
for i, path in enumerate(runs):
    section = ""
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            section = line[3:].split(" ")[0].split("—")[0].strip()
        m = re.match(r"\| (.+?) \| ([0-9.,]+)× \| ([≤≥]) ([0-9.,]+)× \|", line)
        if not m:
            continue
        # labels changed slightly between harness versions; one row per target
        label = re.sub(r" \(no growth[^)]*\)", "", m.group(1)).replace("release: 1,000", "release, 1,000")
        name = section + ": " + label
        if name not in rows:
            rows[name] = (float(m.group(4).replace(",", "")), m.group(3), [None] * len(runs))
            order.append(name)
        rows[name][2][i] = float(m.group(2).replace(",", ""))

colors = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759"]
left, bar_h, gap, width, scale_max = 430, 9, 10, 360, 8.0
height = 40 + len(order) * (len(runs) * bar_h + gap) + 40
x = lambda v: left + min(v, scale_max) / scale_max * width
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 60}" height="{height}" '
       'font-family="sans-serif" font-size="11">',
       '<text x="10" y="18" font-size="13">distlock targets: measured ratio per run (bars) and target (black tick);'
       ' axis capped at 8×</text>']
y = 34
for name in order:
    wanted, comp, values = rows[name]
    block = len(runs) * bar_h
    out.append(f'<text x="{left - 6}" y="{y + block / 2 + 4}" text-anchor="end">{name} ({comp} {wanted:g}×)</text>')
    for j, v in enumerate(values):
        if v is None:
            continue
        out.append(f'<rect x="{left}" y="{y + j * bar_h}" width="{x(v) - left:.1f}" height="{bar_h - 1}" '
                   f'fill="{colors[j % len(colors)]}"/>')
        out.append(f'<text x="{x(v) + 3:.1f}" y="{y + j * bar_h + bar_h - 1}" font-size="9">{v:g}×</text>')
    out.append(f'<line x1="{x(wanted):.1f}" x2="{x(wanted):.1f}" y1="{y - 2}" y2="{y + block + 1}" '
               'stroke="black" stroke-width="2"/>')
    y += block + gap
for j, path in enumerate(runs):
    label = path.split("/")[-1]
    out.append(f'<rect x="{10 + j * 200}" y="{y + 8}" width="10" height="10" fill="{colors[j % len(colors)]}"/>')
    out.append(f'<text x="{24 + j * 200}" y="{y + 17}">{label}</text>')
out.append("</svg>")
print("\n".join(out))
