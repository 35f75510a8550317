#!/usr/bin/env python3
"""Numerics of a parallel scan over the chunk state maps (DeltaNet, CPU, numpy).

The chunk recurrence H_{c+1} = A_c H_c + B_c (A_c = I - K^T W, B_c = K^T U) is affine, so the
states entering every chunk are an inclusive scan of the pairs (A_c, B_c) under
(A2, B2) o (A1, B1) = (A2 A1, A2 B1 + B2): log2(N) levels instead of a chain of N steps. This
checks the states' error against an fp64 chain when the scan's operands are rounded to bf16 or
tf32 (fp32 accumulation), beside the sequential pass's own model (W, U, K, H and E rounded to
bf16 where the state kernels round them), and a chain of the maps themselves, one product a step
(H <- H - (K^T W) H + K^T U with the maps' products in bf16; or A_c rounded whole). Inputs: unit-norm keys, beta ~ U(0, 1), v ~ N(0, 1).

    python3 bench/affine_scan_numerics.py [seed] [K] [chunks]
"""
import sys

import numpy as np


def round_mantissa(x, bits):
    """x rounded to `bits` explicit mantissa bits (7: bf16, 10: tf32), nearest-even, as float64."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    drop = 23 - bits
    u = ((u + ((u >> drop) & 1) + (1 << (drop - 1)) - 1) >> drop) << drop
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


def bf16(x):
    return round_mantissa(x, 7)


def state_errors(seed=0, K=64, N=256, C=64, V=64):
    """Relative errors of the states entering each chunk against the fp64 chain: the sequential
    pass's bf16 model ("chain") and the scan with bf16, tf32 and fp32 operands."""
    rng = np.random.default_rng(seed)
    ks, Ws, Us = [], [], []
    for _ in range(N):
        k = rng.standard_normal((C, K))
        k /= np.linalg.norm(k, axis=1, keepdims=True)
        beta = rng.uniform(0, 1, C)
        v = rng.standard_normal((C, V))
        T = np.linalg.inv(np.eye(C) + np.tril((beta[:, None] * k) @ k.T, -1))
        ks.append(k)
        Ws.append(T @ (beta[:, None] * k))
        Us.append(T @ (beta[:, None] * v))

    def chain(rounded):
        H, out = np.zeros((K, V)), []
        for c in range(N):
            out.append(H.copy())
            k, W, U = (bf16(ks[c]), bf16(Ws[c]), bf16(Us[c])) if rounded else (ks[c], Ws[c], Us[c])
            E = U - W @ (bf16(H) if rounded else H)
            H = H + k.T @ (bf16(E) if rounded else E)
        return np.stack(out)

    def scan(bits):  # Hillis-Steele; the operands of every combine rounded to `bits` (0: fp32 kept)
        r = (lambda x: round_mantissa(x, bits)) if bits else (lambda x: x)
        A = [np.eye(K) - bf16(ks[c]).T @ bf16(Ws[c]) for c in range(N)]
        B = [bf16(ks[c]).T @ bf16(Us[c]) for c in range(N)]
        step = 1
        while step < N:
            A2, B2 = list(A), list(B)
            for c in range(step, N):
                A2[c] = r(A[c]) @ r(A[c - step])
                B2[c] = r(A[c]) @ r(B[c - step]) + B[c]
            A, B, step = A2, B2, 2 * step
        return np.stack([np.zeros((K, V))] + B[: N - 1])

    def map_chain(whole):  # one product a step: H <- A_c bf16(H) + B_c, maps formed per chunk in fp32
        H, out = np.zeros((K, V)), []
        for c in range(N):
            out.append(H.copy())
            M = bf16(bf16(ks[c]).T @ bf16(Ws[c]))  # K^T W, the map's low-rank part, bf16
            Bc = bf16(bf16(ks[c]).T @ bf16(Us[c]))
            if whole:  # A_c = I - K^T W rounded whole: its identity part rounds too
                H = bf16(np.eye(K) - bf16(ks[c]).T @ bf16(Ws[c])) @ bf16(H) + Bc
            else:  # the identity (decay) part applied to the fp32 state, the product with M only
                H = H - M @ bf16(H) + Bc
        return np.stack(out)

    ref = chain(False)

    def err(x):
        return float(np.linalg.norm(x - ref) / np.linalg.norm(ref))

    return {"chain": err(chain(True)), "bf16": err(scan(7)), "tf32": err(scan(10)), "fp32": err(scan(0)),
            "map": err(map_chain(False)), "map_whole": err(map_chain(True))}


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    K = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    N = int(sys.argv[3]) if len(sys.argv) > 3 else 256
    e = state_errors(seed, K, N)
    print(f"K = {K}, {N} chunks, seed {seed}: state error against the fp64 chain")
    print(f"  sequential pass (bf16 where the kernels round): {e['chain']:.2e}")
    for name in ("bf16", "tf32", "fp32"):
        print(f"  scan, {name} operands: {e[name]:.2e}")
    print(f"  chain of maps, one product a step (bf16 K^T W and K^T U, fp32 identity): {e['map']:.2e}")
    print(f"  chain of maps, A_c rounded whole to bf16: {e['map_whole']:.2e}")


if __name__ == "__main__":
    main()
