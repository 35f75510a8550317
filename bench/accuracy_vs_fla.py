"""Accuracy on identical inputs: FLA's chunk kernels and rewy's CUDA kernels against one f64
reference, draw by draw (the input distributions and f64 token recurrence of fla_accuracy.py).

    PYTHONPATH=<dir with FLA's fla/ and fla_accuracy.py> python3 bench/accuracy_vs_fla.py \
        --rewy BUILD/rewy [--ops delta,gdn,kda,gdn2] [--T 1024] [--H 16] [--seeds 1,2,3] [--work DIR]

Per op and seed: draws fla_accuracy.inputs (bf16-exact q, k, v, beta, b, w; f32 g, h0), computes the
f64 recurrence and its gradients for random dO and dht, runs FLA on them, writes the same values to
an HDF5 file and runs `rewy op --device cuda` on it for both backward algorithms and both policies.
Prints one line per tensor and configuration,
    SAME <op> <seed> <algo> <policy> <tensor> <ours> <fla> <ours/fla> twin <twin>
then a summary per op and tensor (medians over seeds, the worst per-draw ratios; bars: 1.25x FLA,
2x the bf16 CPU twin, `rewy op --bf16-twin`, on the same inputs).
"""
import argparse
import collections
import os
import statistics
import subprocess
import sys

import h5py
import numpy as np
import torch

import fla_accuracy  # FLA's accuracy anchor: inputs(), recurrence_f64(), fla_call(), rel()

OUR_OP = {"delta": "deltanet", "gdn": "gdn", "kda": "kda", "gdn2": "gdn2"}
BAR = 1.25


def draw(op, T, H, seed):
    """One problem: inputs, dO, dht, the f64 reference (outputs and gradients) and FLA's results."""
    x = fla_accuracy.inputs(op, 1, T, H, 128, seed)
    names = [n for n in ("q", "k", "v", "beta", "g", "b", "w", "h0") if n in x]
    scale = 128 ** -0.5
    ref = {n: x[n].double().clone().requires_grad_(True) for n in names}
    o, S = fla_accuracy.recurrence_f64(op, ref, scale)
    gen = torch.Generator(device=o.device).manual_seed(1000 + seed)
    # dO as FLA receives it (its output is bf16, so autograd hands it a bf16 cotangent)
    do = torch.randn(o.shape, device=o.device, generator=gen, dtype=torch.float64).bfloat16().double()
    dS = torch.randn(S.shape, device=o.device, generator=gen, dtype=torch.float64).float().double()
    gref = torch.autograd.grad((o * do).sum() + (S * dS).sum(), [ref[n] for n in names])
    exact = {"o": o.detach(), "ht": S.detach()}
    exact.update({"d" + n: g for n, g in zip(names, gref)})
    fin = {n: x[n].clone().requires_grad_(True) for n in names}
    fo, fS = fla_accuracy.fla_call(op, fin, scale)
    gf = torch.autograd.grad((fo.float() * do.float()).sum() + (fS.float() * dS.float()).sum(),
                             [fin[n] for n in names], allow_unused=True)
    fla = {"o": fo.detach(), "ht": fS.detach()}
    fla.update({"d" + n: g for n, g in zip(names, gf) if g is not None})
    inputs = {n: x[n].double() for n in names}
    inputs["do"], inputs["dht"] = do, dS
    return inputs, exact, fla


def write_inputs(path, inputs):
    with h5py.File(path, "w") as f:
        for n, t in inputs.items():
            f.create_dataset(n, data=t.cpu().numpy())


def run_ours(rewy, op, src, work, algo, policy, twin=False, device="cuda"):
    """rewy's CUDA kernels, or (twin) the CPU model of their bf16 rounding, on the inputs in `src`."""
    dst = os.path.join(work, f"{op}_{algo}_{policy}{'_twin' if twin else ''}.h5")
    cmd = [rewy, "op", "--in", src, "--out", dst, "--op", OUR_OP[op], "--backward", algo, "--policy", policy]
    cmd += ["--device", "cpu", "--bf16-twin"] if twin else ["--device", device]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()[:400]}")
    with h5py.File(dst, "r") as f:
        return {n: torch.from_numpy(np.asarray(f[n])).double() for n in f.keys()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewy", required=True, help="the rewy binary (CUDA build)")
    ap.add_argument("--ops", default="delta,gdn,kda,gdn2")
    ap.add_argument("--T", type=int, default=1024)
    ap.add_argument("--H", type=int, default=16)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--work", default="/tmp/rewy-accuracy", help="HDF5 files (about 70 MB each at H = 16)")
    ap.add_argument("--device", default="cuda", help="where rewy runs (cpu: a check of this script)")
    ap.add_argument("--twin", type=int, default=1, help="also run the bf16 CPU twin (bar: ours <= 2x twin)")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    ops = [o if o != "deltanet" else "delta" for o in a.ops.split(",")]
    seeds = [int(s) for s in a.seeds.split(",")]
    print(f"same-input accuracy: B=1 T={a.T} H={a.H} D=128, seeds {seeds}; relative L2 error vs f64", flush=True)
    rows = collections.defaultdict(list)  # (op, algo, policy, tensor) -> [(ours, fla)]
    for op in ops:
        for seed in seeds:
            try:
                inputs, exact, fla = draw(op, a.T, a.H, seed)
            except Exception as e:  # FLA (or the reference) failed for this op: say so, go on
                print(f"SAME {op} {seed} FLA-failed {repr(e)[:300]}", flush=True)
                break
            src = os.path.join(a.work, f"{op}_in.h5")
            write_inputs(src, inputs)
            err = lambda got, ref: fla_accuracy.rel(got.to(ref.device).reshape(ref.shape), ref)
            for algo in ("rewy", "baseline"):
                twin = run_ours(a.rewy, op, src, a.work, algo, "recompute", twin=True) if a.twin else {}
                for policy in ("recompute", "save"):
                    ours = run_ours(a.rewy, op, src, a.work, algo, policy, device=a.device)
                    for t, ref in exact.items():
                        if t not in ours or t not in fla:
                            continue
                        eo, ef = err(ours[t], ref), err(fla[t], ref)
                        et = err(twin[t], ref) if t in twin else float("nan")
                        rows[(op, algo, policy, t)].append((eo, ef, et))
                        print(f"SAME {op} {seed} {algo} {policy} {t} {eo:.3e} {ef:.3e} {eo / ef:.3f} twin {et:.3e}",
                              flush=True)
            del inputs, exact, fla
            torch.cuda.empty_cache()
    print(f"\n== same-input accuracy summary (medians over seeds; worst = largest per-draw ours/FLA; bar {BAR}) ==")
    print(f"{'op':9s} {'backward':8s} {'policy':9s} {'tensor':6s} {'ours':>9s} {'FLA':>9s} {'ratio':>6s} {'worst':>6s}"
          f" {'twin':>9s} {'o/twin':>6s}")
    above = 0
    for (op, algo, policy, t), v in rows.items():
        mo, mf, mt = (statistics.median(x[i] for x in v) for i in range(3))
        worst = max(e / f for e, f, _ in v)
        worst_twin = max(e / tw for e, _, tw in v)  # nan (no twin) compares false
        bad = worst > BAR or worst_twin > 2
        flag = "  <-- above bar" if bad else ""
        above += bad
        print(f"{OUR_OP[op]:9s} {algo:8s} {policy:9s} {t:6s} {mo:9.2e} {mf:9.2e} {mo / mf:6.2f} {worst:6.2f}"
              f" {mt:9.2e} {worst_twin:6.2f}{flag}")
    print(f"same-input rows above a bar (worst draw: ours > {BAR}x FLA or > 2x twin): {above} of {len(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
