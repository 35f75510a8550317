#!/usr/bin/env python3
"""scripts/sass.py: the kernel labels of `sizes` read the template arguments of every delta kernel
(variant, K, V, then each kernel's own: ReWY flag and threads, threads, V-slice and modes)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import sass  # noqa: E402

NS = "_ZN4rewy5delta9cuda_impl"
TAIL = "EEvNS1_11DeltaParamsE"


class SassNamesTest(unittest.TestCase):
    def test_labels(self):
        cases = {
            f"{NS}17grad_chunk_kernelILi2ELi128ELi128ELb1ELi512E{TAIL}": "grad_chunk rewy 16w",
            f"{NS}17grad_chunk_kernelILi3ELi128ELi128ELb0ELi256E{TAIL}": "grad_chunk baseline 8w",
            f"{NS}14wy_prep_kernelILi2ELi128ELi128ELi512E{TAIL}": "wy_prep 16w",
            f"{NS}16wy_replay_kernelILi0ELi128ELi128ELi256E{TAIL}": "wy_replay 8w",
            f"{NS}16state_fwd_kernelILi2ELi128ELi128ELi64ELb1ELb0E{TAIL}": "state_fwd 64 out",
            f"{NS}16state_fwd_kernelILi2ELi128ELi128ELi128ELb1ELb1E{TAIL}": "state_fwd 128 out_store",
            f"{NS}16state_fwd_kernelILi1ELi128ELi128ELi16ELb0ELb1E{TAIL}": "state_fwd 16 replay",
            f"{NS}16state_bwd_kernelILi2ELi128ELi128ELi32E{TAIL}": "state_bwd 32",
        }
        for mangled, label in cases.items():
            self.assertEqual(sass.readable(mangled), label, mangled)

    def test_only_k128_v128_rows_are_sized(self):
        self.assertTrue(sass.K128_V128.search(f"{NS}14wy_prep_kernelILi2ELi128ELi128ELi256E{TAIL}"))
        self.assertFalse(sass.K128_V128.search(f"{NS}14wy_prep_kernelILi2ELi64ELi128ELi256E{TAIL}"))


if __name__ == "__main__":
    unittest.main()
