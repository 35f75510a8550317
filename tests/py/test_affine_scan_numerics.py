#!/usr/bin/env python3
"""bench/affine_scan_numerics.py: mantissa rounding is nearest-even at bf16's and tf32's widths,
and on a small case the scan's states are as close to the fp64 chain as the sequential bf16
model's, closer as its operands widen; a chain of the maps themselves (one product a step, the
decay kept in fp32) is as close as the sequential model. Needs numpy (skipped, and reported so, without it)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
try:
    import numpy as np

    import affine_scan_numerics as asn
except ImportError:  # numpy missing
    np = None


@unittest.skipIf(np is None, "numpy is not installed")
class AffineScanNumericsTest(unittest.TestCase):
    def test_rounding(self):
        one = 1.0
        self.assertEqual(asn.round_mantissa(one + 2.0**-8, 7), one)  # a tie rounds to even
        self.assertEqual(asn.round_mantissa(one + 3 * 2.0**-8, 7), one + 2.0**-6)  # tie, up to even
        self.assertEqual(asn.round_mantissa(one + 2.0**-7 + 2.0**-9, 7), one + 2.0**-7)  # below half
        self.assertEqual(asn.round_mantissa(-(one + 2.0**-7 + 2.0**-8 + 2.0**-12), 7), -(one + 2.0**-6))
        self.assertEqual(asn.round_mantissa(one + 2.0**-11, 10), one)
        self.assertEqual(asn.round_mantissa(one + 3 * 2.0**-11, 10), one + 2.0**-9)

    def test_scan_tracks_the_chain(self):
        e = asn.state_errors(seed=5, K=32, N=32, C=16, V=16)
        for name in ("chain", "bf16", "tf32", "fp32", "map", "map_whole"):
            self.assertGreater(e[name], 1e-5, name)  # bf16 inputs: never exact
            self.assertLess(e[name], 2e-2, name)
        self.assertLessEqual(e["fp32"], e["tf32"] * 1.05)
        self.assertLess(e["tf32"], e["bf16"])
        self.assertLess(e["bf16"], 2 * e["chain"])
        # One product a step keeps the pass's accuracy while the decay (identity) part stays fp32;
        # rounding the whole map to bf16 costs about a quarter more.
        self.assertLess(e["map"], 1.1 * e["chain"])
        self.assertLess(e["map"], e["map_whole"])


if __name__ == "__main__":
    unittest.main()
