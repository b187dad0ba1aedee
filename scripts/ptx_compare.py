#!/usr/bin/env python3
"""Compares the kernels of two PTX files function by function.

usage: scripts/ptx_compare.py OLD.ptx NEW.ptx

Prints, for each function, whether its body is byte-identical, identical once
virtual register and label numbers are renumbered (the instruction stream is
the same; only the names the front end gave its registers differ), or
different, with the first differing lines. Exit 0 when every function is
identical at least up to renumbering, 1 otherwise. docs/BENCHMARKS.md uses it
to show that a change to host-side types leaves the measured kernels alone.
"""
import re
import sys


def functions(path, renumber):
    text = open(path, encoding="utf-8").read()
    parts = re.split(r"\n(?=(?:\.visible |\.weak |\.extern )?\.(?:entry|func) )", text)
    out = {}
    for part in parts[1:]:
        m = re.match(r"(?:\.visible |\.weak |\.extern )?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z0-9_$]+)", part)
        body = part
        if renumber:
            body = re.sub(r"%(r|rd|rs|p|f|fd)\d+", r"%\1", body)
            body = re.sub(r"\$L__BB\d+_\d+", "L", body)
            body = re.sub(r"\.reg \.\w+ \t%\w+<\d+>;", ".reg", body)
        out[m.group(1) if m else part[:80]] = body
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    old, new = sys.argv[1], sys.argv[2]
    exact_old, exact_new = functions(old, False), functions(new, False)
    norm_old, norm_new = functions(old, True), functions(new, True)
    worst = 0
    for name in sorted(set(exact_old) | set(exact_new)):
        if name not in exact_old or name not in exact_new:
            print(f"only in {'new' if name in exact_new else 'old'}: {name}")
            worst = 1
        elif exact_old[name] == exact_new[name]:
            print(f"identical: {name}")
        elif norm_old[name] == norm_new[name]:
            print(f"identical up to register numbering: {name}")
        else:
            print(f"DIFFERENT: {name}")
            a, b = norm_old[name].split("\n"), norm_new[name].split("\n")
            for i, (x, y) in enumerate(zip(a, b)):
                if x != y:
                    print(f"  line {i}: {x.strip()}  |  {y.strip()}")
                    break
            worst = 1
    return worst


if __name__ == "__main__":
    sys.exit(main())
