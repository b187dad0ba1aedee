#!/usr/bin/env python3
"""scripts/ptx_compare.py on hand-made PTX: a kernel renamed and renumbered
is the same function under --map, one changed instruction is not, and an
unused parameter is left out only under --ignore-parameters."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "ptx_compare.py")
HEADER = ".version 8.8\n.target sm_90\n.address_size 64\n\n"


def kernel(name, regs, op="add.s64", extra_param=False, visible=False):
    params = f"\t.param .u64 {name}_param_0" + (f",\n\t.param .align 1 .b8 {name}_param_1[1]" if extra_param else "")
    a, b = regs
    return (f"\t// .globl\t{name}\n{'.visible ' if visible else ''}.entry {name}(\n{params}\n)\n{{\n"
            f"\t.reg .b64 \t%rd<{b + 1}>;\n\n\tld.param.u64 \t%rd{a}, [{name}_param_0];\n"
            f"\t{op} \t%rd{b}, %rd{a}, 1;\n\t{{ // callseq {a}, 0\n\t}} // callseq {a}\n"
            f"\tst.global.u64 \t[%rd{a}], %rd{b};\n\tret;\n\n}}\n")


class PtxCompare(unittest.TestCase):
    def run_compare(self, old, new, *flags, pairs=None):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for i, text in enumerate((old, new)):
                parts = text if isinstance(text, list) else [text]
                names = []
                for j, part in enumerate(parts):
                    names.append(os.path.join(d, f"{i}-{j}.ptx"))
                    with open(names[-1], "w", encoding="utf-8") as f:
                        f.write(HEADER + part)
                paths.append(",".join(names))
            args = [sys.executable, SCRIPT, *flags]
            if pairs:
                with open(os.path.join(d, "map.txt"), "w", encoding="utf-8") as f:
                    f.write("".join(f"{a} {b}\n" for a, b in pairs))
                args += ["--map", os.path.join(d, "map.txt")]
            r = subprocess.run(args + paths, capture_output=True, text=True)
            return r.returncode, r.stdout

    def test_renamed_and_renumbered_is_identical_under_map(self):
        old = kernel("_ZN4gfsl13_GLOBAL__N__a7run_opsEv", (1, 2))
        new = kernel("_ZN4gfsl15run_subject_opsEv", (4, 7), visible=True)
        code, out = self.run_compare(old, new)
        self.assertEqual(code, 1, out)
        self.assertIn("only in old", out)
        code, out = self.run_compare(old, new, pairs=[("_ZN4gfsl13_GLOBAL__N__a7run_opsEv", "_ZN4gfsl15run_subject_opsEv")])
        self.assertEqual(code, 0, out)
        self.assertIn("identical up to register numbering", out)

    def test_a_changed_instruction_is_different(self):
        old = kernel("_Z1kv", (1, 2))
        new = kernel("_Z1kv", (1, 2), op="sub.s64")
        code, out = self.run_compare(old, new)
        self.assertEqual(code, 1, out)
        self.assertIn("DIFFERENT: _Z1kv", out)

    def test_an_unused_parameter_counts_unless_ignored(self):
        old = kernel("_Z1kv", (1, 2))
        new = kernel("_Z1kv", (3, 5), extra_param=True)
        self.assertEqual(self.run_compare(old, new)[0], 1)
        code, out = self.run_compare(old, new, "--ignore-parameters")
        self.assertEqual(code, 0, out)

    def test_kernels_moved_into_several_files(self):
        old = kernel("_Z1av", (1, 2)) + kernel("_Z1bv", (3, 4))
        new = [kernel("_Z1bv", (1, 2)), kernel("_Z1av", (5, 6))]
        code, out = self.run_compare(old, new)
        self.assertEqual(code, 0, out)
        self.assertEqual(out.count("identical"), 2, out)


if __name__ == "__main__":
    unittest.main()
