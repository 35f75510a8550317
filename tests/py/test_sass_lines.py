#!/usr/bin/env python3
"""scripts/sass_lines.py by instruction: the stall reasons over the kernel, samples and executed
instructions by opcode, and the excess global sectors and shared wavefronts summed by instruction
kind, read from an ncu SASS source page (a synthetic one here, in ncu's layout: a kernel-name row,
then the header)."""
import contextlib
import csv
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import sass_lines  # noqa: E402

HEADER = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Instructions Executed",
          "L2 Theoretical Sectors Global Excessive", "L2 Theoretical Sectors Global",
          "L1 Wavefronts Shared Excessive", "L1 Wavefronts Shared", "stall_short_sb", "stall_barrier",
          "stall_short_sb (Not Issued)"]
ROWS = [
    ["0x100", "      HMMA.16816.F32.BF16 R4, R32, R36, R4", "60", "1000000", "0", "0", "0", "0", "50", "10", "7"],
    ["0x110", "  @!P0  STG.E desc[UR12][R72.64], R71", "10", "2000000", "1500000", "2000000", "0", "0", "10", "0", "1"],
    ["0x120", "      STG.E desc[UR12][R72.64+0x4], R75", "10", "2000000", "1500000", "2000000", "0", "0", "0", "10", "1"],
    ["0x130", "      LDS.64 R14, [R20+0x4400]", "20", "500000", "0", "0", "250000", "500000", "20", "0", "3"],
]


class SassLinesTest(unittest.TestCase):
    def summary(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "page.csv")
            with open(path, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["Kernel Name", "void k(DeltaParams)"])
                w.writerow(HEADER)
                w.writerows(ROWS)
            header, data = sass_lines.read_page(path)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                sass_lines.by_instruction(header, data, 2)
            return out.getvalue().splitlines()

    def test_totals_and_stalls(self):
        lines = self.summary()
        self.assertEqual(lines[0], "4 instructions, 100 samples")
        # Not-issued columns are not reasons of their own.
        self.assertEqual(lines[1], "stalls: short_sb 80.0%, barrier 20.0%")

    def test_opcodes_and_executed(self):
        lines = self.summary()
        self.assertIn("HMMA.16816.F32.BF16 60.0%", lines[2])
        self.assertIn("STG.E 20.0%", lines[2])  # the predicate is not the opcode
        self.assertTrue(lines[3].startswith("warp instructions executed: STG 4.0M, HMMA 1.0M, LDS 0.5M"), lines[3])

    def test_excess_by_kind(self):
        lines = self.summary()
        self.assertEqual(lines[4], "excess global sectors (excess / all): STG.E 3.00M / 4.00M")
        self.assertEqual(lines[5], "excess shared wavefronts (excess / all): LDS.64 0.25M / 0.50M")
        self.assertIn("60.0%", lines[6])  # then the most-sampled instructions
        self.assertEqual(len(lines), 8)


if __name__ == "__main__":
    unittest.main()
