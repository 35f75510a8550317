#!/usr/bin/env python3
"""bench/compare_ours.py: old/new ratios per (op, policy, direction) over the shapes both files
hold, the gates and backward algorithm filters, and clear errors for unusable files."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ours_csv import run_script, write_csv as write  # noqa: E402


def run(*args):
    return run_script("compare_ours.py", *args)


class CompareOursTest(unittest.TestCase):
    def test_ratios_filters_and_shared_shapes(self):
        with tempfile.TemporaryDirectory() as d:
            old = write(d, "old.csv", [
                "kda,8,2048,16,128,recompute,bench,bwd,rewy,2.0,1.9",
                "kda,1,16384,16,128,recompute,bench,bwd,rewy,8.0,7.9",
                "kda,8,2048,16,128,recompute,bench,bwd,baseline,9.0,9.0",   # other algorithm: ignored
                "kda,8,2048,16,128,recompute,realistic,bwd,rewy,9.0,9.0",   # other gates: ignored
                "kda,4,4096,16,128,recompute,bench,fwd,-,1.0,1.0",          # only in old: ignored
            ])
            new = write(d, "new.csv", [
                "kda,8,2048,16,128,recompute,bench,bwd,rewy,1.0,1.0",
                "kda,1,16384,16,128,recompute,bench,bwd,rewy,2.0,2.0",
                "kda,8,2048,16,128,recompute,bench,bwd,baseline,1.0,1.0",
            ])
            r = run(old, new)
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = [l.split() for l in r.stdout.splitlines() if l.startswith("kda")]
            self.assertEqual(len(rows), 1)  # the forward row exists in one file only
            op, pol, dirn, geo, worst, n = rows[0]
            self.assertEqual((op, pol, dirn, n), ("kda", "recompute", "bwd", "2"))
            self.assertAlmostEqual(float(geo), (2.0 * 4.0) ** 0.5, places=3)  # ratios 2 and 4
            self.assertAlmostEqual(float(worst), 2.0, places=3)
            base = run(old, new, "--algo", "baseline")
            self.assertIn("9.000", base.stdout)

    def test_bad_files_are_named(self):
        with tempfile.TemporaryDirectory() as d:
            r = run(os.path.join(d, "missing.csv"), os.path.join(d, "missing.csv"))
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("missing.csv", r.stderr)
            bad = os.path.join(d, "bad.csv")
            with open(bad, "w") as f:
                f.write("a,b\n1,2\n")
            self.assertIn("bad.csv", run(bad, bad).stderr)
            empty_old = write(d, "o.csv", ["gdn,8,2048,16,128,save,bench,fwd,-,1.0,1.0"])
            empty_new = write(d, "n.csv", ["kda,8,2048,16,128,save,bench,fwd,-,1.0,1.0"])
            r = run(empty_old, empty_new)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("share no", r.stderr)


if __name__ == "__main__":
    unittest.main()
