#!/usr/bin/env python3
"""The README's tour, made from the commands it shows, so that it cannot drift.

  scripts/readme_tour.py --gfsl build/gfsl --check README.md   exit 1 and a diff when the README's tour differs
  scripts/readme_tour.py --gfsl build/gfsl --write README.md   put today's tour in the README
  ... --write README.md --picture docs/img/counterexample-thesis.png
                                                              also the picture of step 1's page (headless Chromium)

Every command is budgeted in runs and seeded, so any machine prints the same;
what does depend on the machine (seconds, thread counts) is shown as `...`.
The tour is the part of the README between the two marker lines below; the
rest of the README is left as it is. Exit codes: 0 same (or written), 1 the
tour differs, 2 a command failed or the README has no markers.
"""
import argparse
import difflib
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

BEGIN = "<!-- tour: made by scripts/readme_tour.py from the commands it shows; the readme_tour test fails when it drifts -->"
END = "<!-- end of tour -->"
WIDTH = 120
MAX_LINES = 120  # the front page: the rest belongs in docs/

# Figures a loaded machine changes: wall-clock times and the thread count.
MASKS = [
    (re.compile(r"\b\d+(\.\d+)? s\b"), "... s"),
    (re.compile(r"\b\d+(\.\d+)? Mops/s\b"), "... Mops/s"),
    (re.compile(r"\bon \d+ threads\b"), "on ... threads"),
]


def mask(line):
    for pattern, text in MASKS:
        line = pattern.sub(text, line)
    return line


def cut(line):
    """A long line cut at a word boundary, the cut shown as `...`."""
    if len(line) <= WIDTH:
        return line
    at = line.rfind(" ", WIDTH // 2, WIDTH - 4)
    return line[: at if at > 0 else WIDTH - 4] + " ..."


class Tour:
    def __init__(self, gfsl, work):
        self.gfsl = os.path.abspath(gfsl)
        self.work = work
        self.out = []

    def run(self, args, expect):
        p = subprocess.run([self.gfsl] + args, cwd=self.work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != expect:
            sys.exit(f"readme_tour: gfsl {' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout[-2000:]}")
        return p.stdout.splitlines()

    def text(self, *lines):
        self.out.extend(lines)

    def block(self, command, lines):
        self.out.append("```text")
        self.out.append("$ " + command)
        self.out.extend(cut(mask(line)) for line in lines)
        self.out.append("```")


def pick(lines, *prefixes):
    """The lines that start with one of `prefixes`, in order, a `...` where lines were left out."""
    shown, skipped = [], False
    for line in lines:
        if any(line.startswith(p) for p in prefixes):
            if skipped and shown:
                shown.append("...")
            shown.append(line)
            skipped = False
        else:
            skipped = True
    return shown


def make_tour(gfsl, work):
    t = Tour(gfsl, work)
    t.text("## A tour in five commands", "",
           "Real output of the host-only `build/gfsl`, trimmed where `...` shows it (times too). Campaigns are seeded",
           "(`--seed 1` is the default) and budgeted in runs, so any machine prints the same.", "",
           "**1. The published algorithm, chunks read lane by lane:** a wrong answer found, shrunk, written down:")
    # --seconds far above what 300 runs take: the campaign ends at its run
    # budget on any machine, so the output is the same everywhere.
    thesis = ["fuzz", "--variant", "thesis", "--granularity", "lane", "--max-runs", "300", "--seconds", "3600", "--out", "fz-thesis"]
    lines = t.run(thesis + ["--progress", "off"], 1)
    t.block("gfsl " + " ".join(thesis), pick(lines, "gfsl fuzz:", "FAILURE", "  linearizability:", "written to", "replay:"))
    failures = sorted(glob.glob(os.path.join(work, "fz-thesis", "failure-*")))
    if not failures:
        sys.exit("readme_tour: the published algorithm's campaign wrote no failure folder")
    folder = os.path.relpath(failures[0], work)

    t.text("**2. Why:** the shrunk run's last torn read: writes that landed while a team read the chunk lane by lane:")
    inter = open(os.path.join(failures[0], "interleaving.txt")).read().splitlines()
    torn = [i for i, line in enumerate(inter) if "TORN" in line]
    last = torn[-1] if torn else len(inter) - 1
    shown = inter[max(0, last - 5): last + 1]
    t.block(f"cat {folder}/interleaving.txt", (["..."] if last > 5 else []) + shown)

    t.text("**3. The same campaign on the default variant** (what it covered: [FUZZING.md](docs/FUZZING.md)):")
    robust = ["fuzz", "--granularity", "lane", "--max-runs", "300", "--seconds", "3600", "--out", "fz-robust"]
    lines = t.run(robust + ["--progress", "off"], 0)
    t.block("gfsl " + " ".join(robust), pick(lines, "gfsl fuzz:", "coverage pairs:", "no failure"))
    t.text("**4, 5. A concurrent run, recorded, and its history judged:**")
    run = ["run", "--teams", "8", "--ops", "20000", "--mix", "20,20,60", "--range", "1000", "--trace", "t.gfsl"]
    lines = t.run(run, 0)
    t.block("gfsl " + " ".join(run), pick(lines, "schedule:", "check:    final structure", "trace:"))
    lines = t.run(["check", "t.gfsl"], 0)
    t.block("gfsl check t.gfsl", pick(lines, "verdict:", "snapshot:"))
    t.text("", "Step 1's `counterexample.html`: the failing key's operations, the answers that cannot all hold, the",
           "longest linearizable prefix, then every access to the key's chunk, torn reads marked.", "",
           "![The counterexample page of the published algorithm's torn read](docs/img/counterexample-thesis.png)")
    return t.out, failures[0]


def picture(page, png):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        sys.exit("readme_tour: --picture needs chromium (apt-get install chromium)")
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1200,900",
                    "--screenshot=" + os.path.abspath(png), "file://" + os.path.abspath(page)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gfsl", required=True, help="the gfsl program to run")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", metavar="README")
    mode.add_argument("--write", metavar="README")
    ap.add_argument("--picture", metavar="PNG", help="with --write: also draw step 1's page into PNG")
    a = ap.parse_args()
    readme = a.check or a.write
    text = open(readme).read()
    if BEGIN not in text or END not in text:
        print(f"readme_tour: {readme}: expected the marker lines of the tour ({BEGIN!r} ... {END!r})", file=sys.stderr)
        return 2
    if a.check and text.count("\n") > MAX_LINES:
        print(f"readme_tour: {readme}: {text.count(chr(10))} lines, the front page holds at most {MAX_LINES}", file=sys.stderr)
        return 1
    head, rest = text.split(BEGIN, 1)
    old, tail = rest.split(END, 1)
    work = tempfile.mkdtemp(prefix="gfsl-tour-")
    try:
        lines, failure = make_tour(a.gfsl, work)
        new = "\n" + "\n".join(lines) + "\n"
        if a.check:
            if old == new:
                print(f"readme_tour: {readme}: the tour is what the commands print today ({len(lines)} lines)")
                return 0
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), readme + " (the tour)",
                                                       "what the commands print today"))
            print(f"readme_tour: {readme}: the tour differs from what the commands print; "
                  f"scripts/readme_tour.py --gfsl GFSL --write {readme} updates it", file=sys.stderr)
            return 1
        with open(readme, "w") as f:
            f.write(head + BEGIN + new + END + tail)
        if a.picture:
            picture(os.path.join(failure, "counterexample.html"), a.picture)
        print(f"readme_tour: {readme}: tour written ({len(lines)} lines)")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
