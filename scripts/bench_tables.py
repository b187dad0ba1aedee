#!/usr/bin/env python3
"""Markdown tables from `gfsl bench` CSVs, as docs/BENCHMARKS.md shows them.

    scripts/bench_tables.py launch.csv        # Table 5.1: launch configurations
    scripts/bench_tables.py thesis.csv        # median MOPS per workload and key range
    scripts/bench_tables.py recording.csv     # recording on against off
"""
import csv
import sys
from collections import OrderedDict


def fmt_range(r):
    r = int(r)
    return f"{r // 1000000}M" if r >= 1000000 else f"{r // 1000}K"


def launch_table(rows):
    print("| N | threads/block | min blocks/SM | registers | local bytes | warps/SM | occupancy | teams | median MOPS | 95% CI |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        t, b = r["launch"].split("/")
        print(f"| {r['chunk']} | {t} | {b} | {r['registers']} | {r['local_bytes']} | {r['warps_per_sm']} | "
              f"{float(r['occupancy']) * 100:.0f}% | {r['teams']} | {float(r['median_mops']):.1f} | "
              f"{float(r['ci95_low']):.1f}-{float(r['ci95_high']):.1f} |")


def thesis_table(rows):
    ranges = sorted({int(r["range"]) for r in rows})
    series = OrderedDict()
    exact = {}
    for r in rows:
        label = f"GFSL-{r['chunk']}" if r["impl"] == "gfsl" else "M&C"
        m = float(r["median_mops"]) if not r["error"] else None
        cell = "err" if m is None else (f"{m:.0f}" if m >= 10 else f"{m:.1f}")
        series.setdefault((r["workload"], label), {})[int(r["range"])] = cell
        exact[(r["workload"], label, int(r["range"]))] = m
    print("| workload | impl | " + " | ".join(fmt_range(x) for x in ranges) + " |")
    print("|---|---|" + "---|" * len(ranges))
    for (w, label), cells in sorted(series.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        print(f"| {w} | {label} | " + " | ".join(cells.get(x, "-") for x in ranges) + " |")
    # GFSL-32 against the baseline, where both ran.
    print()
    print("| workload | " + " | ".join(fmt_range(x) for x in ranges) + " |  (GFSL-32 / M&C)")
    print("|---|" + "---|" * len(ranges))
    for w in OrderedDict((k[0], 0) for k in series):
        cells = []
        for x in ranges:
            g, m = exact.get((w, "GFSL-32", x)), exact.get((w, "M&C", x))
            cells.append(f"{g / m:.2f}x" if g and m else "-")
        print(f"| {w} | " + " | ".join(cells) + " |")


def recording_table(rows):
    print("| N | launch | recording | median MOPS | 95% CI | against off |")
    print("|---|---|---|---|---|---|")
    off = {}
    for r in rows:
        m = float(r["median_mops"])
        if r["impl"] == "gfsl":
            off[r["chunk"]] = m
        ratio = m / off[r["chunk"]] if off.get(r["chunk"]) else 1.0
        rec = {
            "gfsl-rec": "on (device counter)",
            "gfsl-rec-globaltimer": "on (%globaltimer)",
            "gfsl-rec-records-only": "records only (no stamps)",
            "gfsl-rec-stamps-only": "stamps only (device counter, no records)",
        }.get(r["impl"], "off")
        print(f"| {r['chunk']} | {r['launch']} | {rec} | {m:.1f} | {float(r['ci95_low']):.1f}-{float(r['ci95_high']):.1f} | {ratio:.2f} |")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["suite"]]
    if not rows:
        sys.exit(f"bench_tables.py: {sys.argv[1]}: no rows")
    suite = rows[0]["suite"]
    {"launch": launch_table, "thesis": thesis_table, "recording": recording_table}[suite](
        [r for r in rows if r["suite"] == suite])


if __name__ == "__main__":
    main()
