#!/usr/bin/env python3
"""Compares the kernels of two PTX files function by function.

usage: scripts/ptx_compare.py [--map NAMES] [--ignore-parameters] OLD.ptx NEW.ptx

Prints, for each function, whether its body is byte-identical, identical once
virtual register and label numbers are renumbered (the instruction stream is
the same; only the names the front end gave its registers differ), or
different, with the first differing lines (renumbering covers virtual
registers, labels, local depots, the numbered globals of a module and the
comments that number its calls). Exit 0 when every function is identical at
least up to renumbering, 1 otherwise. docs/BENCHMARKS.md uses it to show that
a change to host-side types leaves the measured kernels alone.

--map NAMES: a file of lines "OLD_NAME NEW_NAME" pairing functions that a
change renamed (a kernel moved into a template, or into another file, whose
anonymous namespace names its file): each pair is compared as one function,
with its own name (which names its parameters) and its linkage (.visible:
an anonymous namespace's kernel is internal) left out of the comparison.
OLD.ptx and NEW.ptx may each be several files joined by commas (a file's
kernels moved into several translation units).

--ignore-parameters: renumbering also leaves out the functions' parameter
declarations and which parameter a load reads (a kernel that gained an
unused parameter: the same instructions on shifted parameter offsets).
"""
import re
import sys


IGNORE_PARAMETERS = False


def functions(paths, renumber):
    text = "\n".join(open(path, encoding="utf-8").read() for path in paths.split(","))
    parts = re.split(r"\n(?=(?:\.visible |\.weak |\.extern )?\.(?:entry|func) )", text)
    out = {}
    for part in parts[1:]:
        m = re.match(r"(?:\.visible |\.weak |\.extern )?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z0-9_$]+)", part)
        # A function ends at its closing brace; what follows (the next one's
        # .globl comment, globals, the next file's header) is not its code.
        end = re.search(r"\n}[ \t]*(?:\n|$)", part)
        body = (part[: end.end()] if end else part).rstrip()
        if renumber:
            body = re.sub(r"%(r|rd|rs|p|f|fd)\d+", r"%\1", body)
            body = re.sub(r"\$L__BB\d+_\d+", "L", body)
            body = re.sub(r"__local_depot\d+", "__local_depot", body)
            body = re.sub(r"\$\d+\b", "$N", body)  # a module's numbered globals (a function's string constants)
            body = re.sub(r"// callseq \d+(?:, \d+)?", "// callseq", body)  # a comment numbering the module's calls
            body = re.sub(r"\.reg \.\w+ \t%\w+<\d+>;", ".reg", body)
            if IGNORE_PARAMETERS:
                body = re.sub(r"\n\s*\.param [^\n]*", "", body)
                body = re.sub(r"_param_\d+", "_param", body)
        out[m.group(1) if m else part[:80]] = body
    return out


def renamed(funcs, pairs, side):
    """funcs with each paired function under its old name, its own name in its body replaced."""
    out = dict(funcs)
    for old_name, new_name in pairs:
        name = old_name if side == 0 else new_name
        if name in out:
            body = out.pop(name)
            out[old_name] = re.sub(r"^\.visible ", "", body.replace(name, "FUNCTION"))
    return out


def main():
    global IGNORE_PARAMETERS
    args = sys.argv[1:]
    if "--ignore-parameters" in args:
        IGNORE_PARAMETERS = True
        args.remove("--ignore-parameters")
    pairs = []
    if len(args) == 4 and args[0] == "--map":
        for line in open(args[1], encoding="utf-8"):
            if line.strip():
                a, b = line.split()
                pairs.append((a, b))
        args = args[2:]
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    old, new = args
    exact_old, exact_new = renamed(functions(old, False), pairs, 0), renamed(functions(new, False), pairs, 1)
    norm_old, norm_new = renamed(functions(old, True), pairs, 0), renamed(functions(new, True), pairs, 1)
    shown = dict(pairs)
    worst = 0
    for name in sorted(set(exact_old) | set(exact_new)):
        if name not in exact_old or name not in exact_new:
            print(f"only in {'new' if name in exact_new else 'old'}: {name}")
            worst = 1
        elif exact_old[name] == exact_new[name]:
            print(f"identical: {name}" + (f" (now {shown[name]})" if name in shown else ""))
        elif norm_old[name] == norm_new[name]:
            print(f"identical up to register numbering: {name}" + (f" (now {shown[name]})" if name in shown else ""))
        else:
            print(f"DIFFERENT: {name}" + (f" (now {shown[name]})" if name in shown else ""))
            a, b = norm_old[name].split("\n"), norm_new[name].split("\n")
            for i, (x, y) in enumerate(zip(a, b)):
                if x != y:
                    print(f"  line {i}: {x.strip()}  |  {y.strip()}")
                    break
            worst = 1
    return worst


if __name__ == "__main__":
    sys.exit(main())
