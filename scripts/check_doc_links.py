#!/usr/bin/env python3
"""Checks that the documentation's references resolve: every relative
Markdown link of the tracked .md files, and every docs/device-runs/ path named
anywhere in the tracked text files (brace lists and * patterns expanded).

    scripts/check_doc_links.py        # exit 0: all resolve; 1: one line per broken reference

Standard library only.
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def expand(p):
    m = re.search(r"\{([^{}]*)\}", p)
    if not m:
        return [p]
    return [q for alt in m[1].split(",") for q in expand(p[:m.start()] + alt + p[m.end():])]


def exists(path):
    return bool(glob.glob(path) or glob.glob(path + "*"))


def main():
    os.chdir(ROOT)
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], capture_output=True, text=True,
                           check=True).stdout.split()
    bad = []
    for f in files:
        if not os.path.isfile(f) or f.startswith("build"):
            continue
        try:
            with open(f, encoding="utf-8") as fh:
                text = fh.read()
        except (UnicodeDecodeError, OSError):
            continue
        if f.endswith(".md"):
            prose = re.sub(r"```.*?```", "", text, flags=re.S)
            for m in re.finditer(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", prose):
                target = m[1]
                if re.match(r"[a-z]+:", target):
                    continue
                if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(f), target))):
                    bad.append(f"{f}: link to {target} does not resolve")
        for m in re.finditer(r"(?:docs/)?device-runs/([A-Za-z0-9_.{},*+/-]*[A-Za-z0-9_}*])", text):
            for p in expand("docs/device-runs/" + m[1]):
                if not exists(p.split("|")[0]):
                    bad.append(f"{f}: {m[0]} names no file")
                    break
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
