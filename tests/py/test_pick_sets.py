#!/usr/bin/env python3
"""bench/pick_sets.py: each variant's fastest set above the floor, sets limited to named variants,
the last line as REWY_EXPERIMENTS, and clear errors for malformed arguments."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ours_csv import run_script, write_csv  # noqa: E402


def write(d, name, times):
    """times: {op: Recompute ReWY backward ms at two shapes}."""
    rows = []
    for op, (a, b) in times.items():
        rows.append(f"{op},8,2048,16,128,recompute,bench,bwd,rewy,{a},{a}")
        rows.append(f"{op},1,16384,16,128,recompute,bench,bwd,rewy,{b},{b}")
        rows.append(f"{op},8,2048,16,128,save,bench,bwd,rewy,0.1,0.1")  # Save: not the criterion
    return write_csv(d, name, rows)


def run(*args):
    return run_script("pick_sets.py", *args)


class PickSetsTest(unittest.TestCase):
    def test_best_set_per_variant(self):
        with tempfile.TemporaryDirectory() as d:
            base = write(d, "d.csv", {"gdn": (1.0, 1.0), "kda": (2.0, 2.0), "gdn2": (2.0, 2.0)})
            a = write(d, "a.csv", {"gdn": (0.98, 0.98), "kda": (1.9, 1.9), "gdn2": (2.02, 2.02)})
            b = write(d, "b.csv", {"gdn": (0.90, 0.90), "kda": (1.8, 1.8), "gdn2": (1.999, 1.999)})
            r = run(base, f"a={a}", f"b={b}@kda,gdn2")
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = r.stdout.splitlines()
            # gdn: b is faster but limited to kda, gdn2; gdn2: b's 1.0005x is under the floor
            self.assertEqual(lines[-1], "a:gdn,b:kda")
            self.assertIn("gdn2      default", lines)
            self.assertEqual(run(base, f"a={a}", "--min", "1.2").stdout.splitlines()[-1], "")

    def test_direction_judges_forward_or_both(self):
        with tempfile.TemporaryDirectory() as d:
            def write_dirs(name, fwd, bwd):  # {op: ms} each, one shape
                rows = [f"{op},8,2048,16,128,recompute,bench,fwd,rewy,{ms},{ms}" for op, ms in fwd.items()]
                rows += [f"{op},8,2048,16,128,recompute,bench,bwd,rewy,{ms},{ms}" for op, ms in bwd.items()]
                return write_csv(d, name, rows)
            base = write_dirs("d.csv", {"kda": 1.0, "gdn": 1.0}, {"kda": 2.0, "gdn": 2.0})
            # f: forward 1.10x, backward 0.99x (kda); even (gdn)
            f = write_dirs("f.csv", {"kda": 1.0 / 1.1, "gdn": 1.0}, {"kda": 2.0 / 0.99, "gdn": 2.0})
            self.assertEqual(run(base, f"f={f}", "--variants", "kda,gdn").stdout.splitlines()[-1], "")
            r = run(base, f"f={f}", "--variants", "kda,gdn", "--direction", "fwd")
            self.assertEqual(r.stdout.splitlines()[-1], "f:kda")
            self.assertIn("1.100x Recompute forward", r.stdout)
            r = run(base, f"f={f}", "--variants", "kda,gdn", "--direction", "both")
            self.assertEqual(r.stdout.splitlines()[-1], "f:kda")  # sqrt(1.10 * 0.99) = 1.044
            self.assertIn("1.044x", r.stdout)
            self.assertNotEqual(run(base, f"f={f}", "--direction", "sideways").returncode, 0)

    def test_bad_arguments_are_named(self):
        with tempfile.TemporaryDirectory() as d:
            base = write(d, "d.csv", {"kda": (1.0, 1.0)})
            r = run(base, "nopath")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("nopath", r.stderr)
            r = run(base, f"a={os.path.join(d, 'missing.csv')}")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("missing.csv", r.stderr)


if __name__ == "__main__":
    unittest.main()
