#!/usr/bin/env python3
"""Draws thesis Figure 5.3/5.4 from `gfsl bench --suite thesis` CSVs: one panel
per workload, throughput (MOPS, median with the 95% confidence interval of the
mean as a bar) against the key range on a log axis, one line per
implementation and chunk size (GFSL robust and thesis at N = 32 and 16, the
per-thread baseline).

    scripts/plot_bench.py bench.csv [more.csv ...] out.svg [title]

Several CSVs are drawn as one figure (`gfsl bench --variant robust` and
`--variant thesis` written apart, say); the arguments are told apart by their
suffix. Standard library only: the SVG is written by hand.
"""
import csv
import html
import math
import sys
from collections import defaultdict

WORKLOADS = ["1-1-98", "5-5-90", "10-10-80", "20-20-60", "contains", "insert", "delete"]
TITLES = {"1-1-98": "[1,1,98]", "5-5-90": "[5,5,90]", "10-10-80": "[10,10,80]", "20-20-60": "[20,20,60]",
          "contains": "contains only", "insert": "insert only", "delete": "delete only"}
# impl "gfsl" is the build's default variant: robust since 2026-11-23, the
# published algorithm before (the only one then); "gfsl-thesis" is --variant thesis.
SERIES = [("gfsl", 32, "GFSL-32", "#1f77b4"), ("gfsl", 16, "GFSL-16", "#2ca02c"),
          ("gfsl-thesis", 32, "GFSL-32 thesis", "#1f77b4"), ("gfsl-thesis", 16, "GFSL-16 thesis", "#2ca02c"),
          ("mc", None, "M&C (per thread)", "#d62728")]
DASHED = {"GFSL-32 thesis", "GFSL-16 thesis"}


def fmt_range(r):
    return f"{r // 1000000}M" if r >= 1000000 else f"{r // 1000}K"


def main():
    args = sys.argv[1:]
    srcs = [a for a in args if a.endswith(".csv")]
    outs = [a for a in args if a.endswith(".svg")]
    rest = [a for a in args if not a.endswith((".csv", ".svg"))]
    if not srcs or len(outs) != 1 or len(rest) > 1:
        sys.exit("usage: plot_bench.py BENCH.csv [MORE.csv ...] OUT.svg [TITLE]")
    out = outs[0]
    title = rest[0] if rest else ""
    points = defaultdict(list)  # (workload, series label) -> [(range, median, lo, hi)]
    device = ""
    for src in srcs:
        try:
            f = open(src, newline="")
        except OSError as e:
            sys.exit(f"plot_bench.py: {src}: {e.strerror}")
        with f:
            reader = csv.DictReader(f)
            missing = {"suite", "impl", "chunk", "workload", "range", "median_mops", "ci95_low", "ci95_high", "error"} - set(reader.fieldnames or [])
            if missing:
                sys.exit(f"plot_bench.py: {src}: not a gfsl bench CSV (no column {', '.join(sorted(missing))})")
            for row in reader:
                if row["suite"] != "thesis" or row["error"] or not row["median_mops"]:
                    continue
                device = device or row["device"]
                for impl, chunk, label, _ in SERIES:
                    if row["impl"] == impl and (chunk is None or int(row["chunk"]) == chunk):
                        points[(row["workload"], label)].append(
                            (int(row["range"]), float(row["median_mops"]), float(row["ci95_low"]), float(row["ci95_high"])))
    panels = [w for w in WORKLOADS if any((w, s[2]) in points for s in SERIES)]
    if not panels:
        sys.exit(f"plot_bench.py: {', '.join(srcs)}: no successful thesis rows to draw")

    pw, ph, ml, mr, mt, mb, cols = 330, 240, 60, 15, 30, 45, 4
    rows = math.ceil(len(panels) / cols)
    width, height = cols * (pw + ml + mr), rows * (ph + mt + mb) + 70
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="14">'
           f'{html.escape(title or "Throughput against key range")}{html.escape(" - " + device) if device else ""}</text>']
    for i, w in enumerate(panels):
        ox = (i % cols) * (pw + ml + mr) + ml
        oy = (i // cols) * (ph + mt + mb) + mt + 30
        series = [(s, sorted(points[(w, s[2])])) for s in SERIES if (w, s[2]) in points]
        xs = sorted({p[0] for _, pts in series for p in pts})
        ymax = max(p[3] for _, pts in series for p in pts) * 1.1 or 1
        step = 10 ** (math.floor(math.log10(ymax)) - 1)
        for mult in (1, 2, 2.5, 5, 10, 20, 25, 50, 100):
            if ymax / (step * mult) <= 6:
                step *= mult
                break
        lx0, lx1 = math.log10(xs[0]), math.log10(xs[-1])
        def px(r):
            return ox + (0.5 if lx1 == lx0 else (math.log10(r) - lx0) / (lx1 - lx0)) * pw
        def py(v):
            return oy + ph - v / ymax * ph
        svg.append(f'<text x="{ox + pw / 2}" y="{oy - 8}" text-anchor="middle" font-size="12">{html.escape(TITLES.get(w, w))}</text>')
        svg.append(f'<rect x="{ox}" y="{oy}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>')
        v = 0.0
        while v <= ymax:
            svg.append(f'<line x1="{ox}" x2="{ox + pw}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#eee"/>')
            svg.append(f'<text x="{ox - 4}" y="{py(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
            v += step
        for r in xs:
            svg.append(f'<text x="{px(r):.1f}" y="{oy + ph + 14}" text-anchor="middle">{fmt_range(r)}</text>')
        svg.append(f'<text x="{ox + pw / 2}" y="{oy + ph + 30}" text-anchor="middle">key range</text>')
        svg.append(f'<text x="{ox - 42}" y="{oy + ph / 2}" text-anchor="middle" '
                   f'transform="rotate(-90 {ox - 42} {oy + ph / 2})">MOPS</text>')
        for (impl, chunk, label, color), pts in series:
            path = " ".join(f"{'M' if k == 0 else 'L'}{px(r):.1f},{py(m):.1f}" for k, (r, m, _, _) in enumerate(pts))
            dash = ' stroke-dasharray="5,3"' if label in DASHED else ""
            svg.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="1.8"{dash}/>')
            for r, m, lo, hi in pts:
                svg.append(f'<line x1="{px(r):.1f}" x2="{px(r):.1f}" y1="{py(max(lo, 0)):.1f}" y2="{py(hi):.1f}" stroke="{color}"/>')
                svg.append(f'<circle cx="{px(r):.1f}" cy="{py(m):.1f}" r="2.5" fill="{color}"/>')
    lx = 20
    ly = height - 20
    drawn = {label for (_, label) in points}
    for _, _, label, color in SERIES:
        if label not in drawn:
            continue
        dash = ' stroke-dasharray="5,3"' if label in DASHED else ""
        svg.append(f'<line x1="{lx}" x2="{lx + 14}" y1="{ly - 7}" y2="{ly - 7}" stroke="{color}" stroke-width="2"{dash}/>')
        svg.append(f'<text x="{lx + 20}" y="{ly - 3}">{html.escape(label)}</text>')
        lx += 130
    svg.append(f'<text x="{lx}" y="{ly - 3}" fill="#555">points: median; bars: 95% confidence interval of the mean</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
