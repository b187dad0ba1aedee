#!/usr/bin/env python3
"""One line per configuration of `gfsl stress --json` files, and the first
violation reports: stress_summary.py FILE.json [FILE.json ...]"""
import json
import sys

for path in sys.argv[1:]:
    try:
        configurations = json.load(open(path))["configurations"]
    except (OSError, ValueError, KeyError) as e:
        print(f"{path}: no result ({e})")
        continue
    for c in configurations:
        rate = c["operations"] / c["seconds"] / 1e9 if c["seconds"] else 0
        timing = (f"{c['seconds']:.1f} s of kernel time ({c['wall_seconds']:.1f} s wall)" if "wall_seconds" in c
                  else f"{c['seconds']:.1f} s wall, structure oracle included")
        print(f"{path}: {c['device']} {c['variant']} mutant={c['mutant']} chunk {c['chunk']} range {c['range']} "
              f"teams {c['teams']} ({c['writers']} writing): {c['operations']:.4g} ops ({c['inserts'] + c['deletes']:.3g} "
              f"updates) in {timing} = {rate:.3f} G/s; violations {c['violations']}; structures {c['structures']}, "
              f"{c['structure_violations']} failed; hung {c['hung']} {c['error']}")
        for r in c["reports"][:3]:
            print(f"    team {r['team']} structure {r['structure']} t={r['time'] / 1e9:.3f} s: {r['read']}")
