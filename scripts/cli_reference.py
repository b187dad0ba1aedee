#!/usr/bin/env python3
"""Writes the "## Reference" section of docs/CLI.md from the program's own
--help, so that the reference cannot drift from the flags.

  scripts/cli_reference.py BUILD_DIR [--check]

--check: exit 1, naming the first command whose section differs, instead of
writing. `gfsl bench`'s section comes from BUILD_DIR/gfsl-bench when it is
built (the CUDA backend), and is kept as it is otherwise.
"""
import pathlib
import re
import subprocess
import sys

COMMANDS = ["run", "replay", "fuzz", "fuzz merge", "mutants", "check", "convert", "dot", "bench", "stress"]


def help_text(build, command):
    if command == "bench":
        if not (build / "gfsl-bench").exists():
            return None
        program, argv = build / "gfsl-bench", ["gfsl-bench", "--help"]
    else:
        program, argv = build / "gfsl", ["gfsl"] + command.split() + ["--help"]
    # argv[0] "gfsl": CLI11 prints it in each Usage line.
    out = subprocess.run(argv, executable=str(program), capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"cli_reference: {' '.join(argv)} exited {out.returncode}")
    # gfsl-bench names itself; the reference speaks of `gfsl bench`.
    return out.stdout.replace("gfsl-bench bench", "gfsl bench").rstrip("\n")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = pathlib.Path(sys.argv[1])
    check = "--check" in sys.argv[2:]
    doc_path = pathlib.Path(__file__).resolve().parent.parent / "docs" / "CLI.md"
    doc = doc_path.read_text()
    head, sep, tail = doc.partition("## Reference\n")
    if not sep:
        sys.exit("cli_reference: docs/CLI.md has no '## Reference' section")
    old = dict(re.findall(r"### gfsl ([a-z ]+)\n\n```text\n(.*?)\n```", tail, re.S))
    sections = []
    for command in COMMANDS:
        text = help_text(build, command)
        if text is None:
            text = old.get(command)
            if text is None:
                sys.exit(f"cli_reference: no gfsl-bench in {build} and no old section for gfsl {command}")
        elif check and old.get(command) != text:
            sys.exit(f"cli_reference: docs/CLI.md's section for gfsl {command} differs from its --help "
                     f"(scripts/cli_reference.py {build} writes it)")
        sections.append(f"### gfsl {command}\n\n```text\n{text}\n```\n")
    if check:
        return
    doc_path.write_text(head + sep + "\n" + "\n".join(sections))


main()
