#!/usr/bin/env python3
"""bench/compare_phases.py: µs per call and phase cycles of two REWY_KERNEL_TIMING outputs side by
side, the kernel filter, kernels or phases on one side only, and clear errors for unusable files."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "compare_phases.py")


def timing(rows, phases):
    out = ["bench output that is not a table", "kernel timing (REWY_KERNEL_TIMING):"]
    out += [f"  {name:44s} {6:8d} calls {us * 6e-3:10.3f} ms total {us:9.1f} us/call  1 CTA/SM" for name, us in rows]
    out.append("phase cycles per CTA (REWY_KERNEL_TIMING=2; SM clock cycles, thread 0 after each barrier):")
    for name, parts in phases:
        total = sum(c for _, c in parts)
        segs = "".join(f" | {p} {c} ({100 * c // total}%)" for p, c in parts)
        out.append(f"  {name:32s} {total:8d} cycles:{segs}")
    return "\n".join(out) + "\n"


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class ComparePhasesTest(unittest.TestCase):
    def test_times_phases_and_filter(self):
        with tempfile.TemporaryDirectory() as d:
            old, new = os.path.join(d, "old.txt"), os.path.join(d, "new.txt")
            with open(old, "w") as f:
                f.write(timing([("grad_chunk_rewy<kda,128,128,16>", 1000.0), ("state_bwd<kda,128,128,64>", 300.0),
                                ("wy_prep<kda,128,128,16>", 560.0)],
                               [("grad_chunk_rewy<kda,128,128,16>", [("loads+G", 9000), ("p1 dQ,dP", 5000),
                                                                     ("dg scan", 2500)])]))
            with open(new, "w") as f:
                f.write(timing([("grad_chunk_rewy<kda,128,128,16>", 800.0), ("state_bwd<kda,128,128,64>", 300.0),
                                ("state_fwd_replay<kda,128,128,64>", 130.0)],
                               [("grad_chunk_rewy<kda,128,128,16>", [("loads+G", 8000), ("p1 dQ,dP", 5500),
                                                                     ("p9 new", 100)])]))
            r = run(old, new)
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = {l.split()[0]: l.split()[1:] for l in r.stdout.splitlines() if "<" in l and "cycles" not in l}
            self.assertEqual(rows["grad_chunk_rewy<kda,128,128,16>"], ["1000.0", "800.0", "1.250"])
            self.assertEqual(rows["state_bwd<kda,128,128,64>"][2], "1.000")
            self.assertIn("only in old: wy_prep<kda,128,128,16>", r.stdout)
            self.assertIn("only in new: state_fwd_replay<kda,128,128,64>", r.stdout)
            self.assertIn("16500 -> 13600 cycles", r.stdout)
            self.assertRegex(r.stdout, r"loads\+G\s+9000 ->\s+8000\s+-1000")
            self.assertRegex(r.stdout, r"p1 dQ,dP\s+5000 ->\s+5500\s+\+500")  # a label with a space and a comma
            self.assertIn("(new phase)", r.stdout)
            self.assertIn("(gone)", r.stdout)
            only = run(old, new, "--kernels", "state_bwd")
            self.assertIn("state_bwd", only.stdout)
            self.assertNotIn("grad_chunk", only.stdout)

    def test_bad_files_are_named(self):
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "missing.txt")
            r = run(missing, missing)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("missing.txt", r.stderr)
            empty = os.path.join(d, "empty.txt")
            with open(empty, "w") as f:
                f.write("no timing here\n")
            r = run(empty, empty)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("empty.txt holds no REWY_KERNEL_TIMING table", r.stderr)


if __name__ == "__main__":
    unittest.main()
