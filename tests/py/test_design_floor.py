#!/usr/bin/env python3
"""bench/design_floor.py: kernel byte counts match hand counts, kept-on-chip tensors drop out of
every kernel, FLA's time turns into the largest speedup, and bad arguments are named."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "design_floor.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import design_floor  # noqa: E402


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def kernel_bytes(op, name, K=128, V=128, drop=()):
    for n, _, rd, wr in design_floor.kernel_bytes(op, K, V, drop):
        if n == name:
            return rd, wr
    raise KeyError(name)


class DesignFloorTest(unittest.TestCase):
    def test_hand_counts_per_token_and_head(self):
        # DeltaNet's fused forward: wy_prep reads q, k (bf16, 128 wide) and beta, no v; writes P and
        # 𝒯 (64 wide), the rows' β (fp32) and e^γ, no W, U or 𝒯 Diag(β); the pass reads 𝒯, the rows'
        # β, k, q, P, v
        self.assertEqual(kernel_bytes("deltanet", "wy_prep"), (2 * 256 + 2, 2 * 128 + 4 + 4 * 128 / 64))
        self.assertEqual(kernel_bytes("deltanet", "state_fwd (output)"),
                         (128 + 4 + 256 + 256 + 128 + 256 + 4 * 128 / 64, 256))
        # KDA's fused forward: wy_prep reads q, k, beta and its fp32 gate, no v, and writes P, 𝒯,
        # the rows' β, K ⊙ Γ, e^γ and the Q̂/K̄ copies; the pass reads 𝒯, the rows' β, K ⊙ Γ, K̄, Q̂, P, v
        self.assertEqual(kernel_bytes("kda", "wy_prep"), (2 * 256 + 2 + 4 * 128, 2 * 128 + 4 + 256 + 4 * 128 / 64 + 2 * 256))
        self.assertEqual(kernel_bytes("kda", "state_fwd (output)"), (128 + 4 + 3 * 256 + 128 + 256 + 4 * 128 / 64, 256))
        # GDN2's forward writes W, U and the copies and reads v, its b and w and its fp32 gate
        self.assertEqual(kernel_bytes("gdn2", "wy_prep"),
                         (3 * 256 + 2 * 256 + 4 * 128, 2 * 128 + 2 * 256 + 4 * 128 / 64 + 2 * 256))
        # the Recompute forward keeps P, 𝒯 and (DeltaNet, GDN) the rows' β: their replay's state pass
        # forms E from 𝒯, the rows' β, k and v and state_bwd forms Wᵀ∂E from them and k; e^γ and
        # GDN's row gates are kept too, so neither runs wy_replay
        for op in ("deltanet", "gdn"):
            names = [n for n, *_ in design_floor.kernel_bytes(op, 128, 128)]
            self.assertEqual([n for n in names if "wy_replay" in n or "fill" in n], [], op)
        self.assertEqual(kernel_bytes("deltanet", "state_fwd (replay)")[0], 128 + 4 + 256 + 256 + 4 * 128 / 64)
        # DeltaNet's state_bwd: 𝒯, the rows' β, q, P, ∂O, e^γ, k
        self.assertEqual(kernel_bytes("deltanet", "state_bwd")[0], 128 + 4 + 256 + 128 + 256 + 4 * 128 / 64 + 256)
        self.assertEqual(kernel_bytes("kda", "wy_replay")[1], 2 * 256 + 4 * 128 / 64 + 3 * 256)  # + Q̂, K̄, Q̂'s 2nd term
        # the replay's state pass writes one bf16 K×V state per 64-token chunk and E
        self.assertEqual(kernel_bytes("gdn", "state_fwd (replay)")[1], 2 * 128 * 128 / 64 + 256)
        # grad_chunk reads E and ∂H⁺ twice: keeping them on chip removes both reads
        reads, _ = kernel_bytes("deltanet", "grad_chunk")
        self.assertEqual(kernel_bytes("deltanet", "grad_chunk", drop=("E", "dHs"))[0], reads - 2 * (256 + 512))
        # the E-form (∂A = −stril(R_U Eᵀ)) reads no W and no U
        self.assertEqual(kernel_bytes("kda", "grad_chunk", drop=("W", "U")), kernel_bytes("kda", "grad_chunk"))

    def test_drop_and_fla_ratio(self):
        with tempfile.TemporaryDirectory() as t:
            fla = os.path.join(t, "fla.csv")
            with open(fla, "w") as f:
                f.write("op,B,T,H,D,policy,fwd_ms,bwd_ms,first_call_s,error\n")
                f.write("delta,8,2048,16,128,recompute,1.0,2.0,0.0,\n")
                f.write("delta,8,2048,16,128,save,9.0,9.0,0.0,\n")
            r = run("--ops", "deltanet", "--fla", fla)
            self.assertEqual(r.returncode, 0, r.stderr)
            fwd = [l for l in r.stdout.splitlines() if "fwd floor" in l][0]
            us = float(fwd.split(":")[1].split("us")[0])
            tokens = 8 * 2048 * 16
            expect = sum(sum(kernel_bytes("deltanet", n)) for n in ("wy_prep", "state_fwd (output)")) * tokens / 4.3e6
            self.assertAlmostEqual(us, expect, delta=1.0)
            self.assertIn(f"at most {1000.0 / expect:.2f}x FLA", fwd)  # the recompute row, not the save row
            kept = run("--ops", "deltanet", "--drop", "Hs,dHs")
            bwd_all = float([l for l in r.stdout.splitlines() if "bwd floor" in l][0].split(":")[1].split("us")[0])
            bwd_kept = float([l for l in kept.stdout.splitlines() if "bwd floor" in l][0].split(":")[1].split("us")[0])
            self.assertLess(bwd_kept, bwd_all)

    def test_bad_arguments_are_named(self):
        r = run("--drop", "Hss")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("unknown tensor(s) ['Hss']", r.stderr)
        r = run("--ops", "mamba")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("unknown op 'mamba'", r.stderr)


if __name__ == "__main__":
    unittest.main()
