"""Accuracy on identical inputs: FLA's chunk kernels and rewy's CUDA kernels against one f64
reference, draw by draw (the input distributions and f64 token recurrence of fla_accuracy.py).

    PYTHONPATH=<dir with FLA's fla/ and fla_accuracy.py> python3 bench/accuracy_vs_fla.py \
        --rewy BUILD/rewy [--ops delta,gdn,kda,gdn2] [--cases 1024:h0 | --sweep] [--H 16] \
        [--seeds 1,2,3] [--work DIR]
    python3 bench/accuracy_vs_fla.py --summarize LOG...   # one table from runs split over processes

A case is `T` or `T:h0` (one sequence of T tokens, with an initial state or without), or
`v<L1>+<L2>+...[:h0]` (varlen: sequences of those lengths packed along T, with cu_seqlens and one
initial state per sequence). `--sweep` runs the part-1 set: T in {1, 63, 64, 65, 1000, 4096} and
three packed sequences, each with and without h0, one seed per case.

Per op, case and seed: draws fla_accuracy.inputs (bf16-exact q, k, v, beta, b, w; f32 g, h0),
computes the f64 recurrence and its gradients for random dO and dht, runs FLA on them, writes the
same values to an HDF5 file and runs `rewy op --device cuda` on it for both backward algorithms and
both policies. Prints one line per tensor and configuration,
    SAME <op> <case> <seed> <algo> <policy> <tensor> <ours> <fla> <ours/fla> twin <twin>
then a summary per op and tensor (medians over draws, the worst per-draw ratios; bars: 1.25x FLA,
2x the bf16 CPU twin, `rewy op --bf16-twin`, on the same inputs).
"""
import argparse
import collections
import itertools
import os
import statistics
import subprocess
import sys
import time

import h5py
import numpy as np
import torch

import fla_accuracy  # FLA's accuracy anchor: inputs(), recurrence_f64(), fla_call(), rel()

OUR_OP = {"delta": "deltanet", "gdn": "gdn", "kda": "kda", "gdn2": "gdn2"}
BAR = 1.25
DEV = "cuda" if torch.cuda.is_available() else "cpu"  # cpu: a check of this script only


SWEEP = "1,1:h0,63,63:h0,64,64:h0,65,65:h0,1000,1000:h0,4096,4096:h0,v63+1000+130,v63+1000+130:h0"


def parse_case(spec):
    """`T[:h0]` or `v<L1>+<L2>+...[:h0]` -> (lengths, with_h0)."""
    body, _, flag = spec.partition(":")
    if flag not in ("", "h0"):
        raise ValueError(f"case {spec!r}: the only flag is ':h0'")
    lengths = [int(n) for n in body[1:].split("+")] if body.startswith("v") else [int(body)]
    if not lengths or min(lengths) < 1:
        raise ValueError(f"case {spec!r}: sequence lengths must be positive")
    return lengths, flag == "h0"


def recurrence(op, ref, scale, lengths):
    """The f64 recurrence per packed sequence: outputs [1, T, H, V], final states [N, H, K, V]."""
    outs, finals, start = [], [], 0
    for n, L in enumerate(lengths):
        seg = {k: (t[:, start:start + L] if k != "h0" else t[n:n + 1]) for k, t in ref.items()}
        o, S = fla_accuracy.recurrence_f64(op, seg, scale)
        outs.append(o)
        finals.append(S)
        start += L
    return torch.cat(outs, 1), torch.cat(finals, 0)


def fla_run(op, x, scale, cu_seqlens):
    """fla_accuracy.fla_call with an optional initial state and cu_seqlens."""
    from fla.ops.delta_rule import chunk_delta_rule
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule
    from fla.ops.kda import chunk_kda
    from fla.ops.gdn2 import chunk_gdn2
    fla_accuracy.allow_gdn_on_old_triton()
    bf = lambda n: x[n].bfloat16()
    kw = dict(scale=scale, initial_state=x.get("h0"), output_final_state=True, cu_seqlens=cu_seqlens)
    if op == "delta":
        return chunk_delta_rule(bf("q"), bf("k"), bf("v"), bf("beta"), **kw)
    if op == "gdn":
        return chunk_gated_delta_rule(bf("q"), bf("k"), bf("v"), x["g"], bf("beta"), **kw)
    if op == "kda":
        return chunk_kda(bf("q"), bf("k"), bf("v"), x["g"], bf("beta"), **kw)
    return chunk_gdn2(bf("q"), bf("k"), bf("v"), x["g"], bf("b"), bf("w"), **kw)


def draw(op, case, H, seed):
    """One problem: inputs, dO, dht, the f64 reference (outputs and gradients) and FLA's results."""
    lengths, with_h0 = parse_case(case)
    T, N = sum(lengths), len(lengths)
    x = fla_accuracy.inputs(op, 1, T, H, 128, seed)
    gen = torch.Generator(device=DEV).manual_seed(2000 + seed)
    x["h0"] = torch.randn(N, H, 128, 128, device=DEV, generator=gen) * 0.1  # fla_accuracy's scale
    names = [n for n in ("q", "k", "v", "beta", "g", "b", "w", "h0") if n in x and (n != "h0" or with_h0)]
    scale = 128 ** -0.5
    ref = {n: x[n].double().clone().requires_grad_(n in names) for n in x}
    if not with_h0:
        ref["h0"] = torch.zeros_like(ref["h0"])
    o, S = recurrence(op, ref, scale, lengths)
    gen = torch.Generator(device=o.device).manual_seed(1000 + seed)
    # dO as FLA receives it (its output is bf16, so autograd hands it a bf16 cotangent)
    do = torch.randn(o.shape, device=o.device, generator=gen, dtype=torch.float64).bfloat16().double()
    dS = torch.randn(S.shape, device=o.device, generator=gen, dtype=torch.float64).float().double()
    gref = torch.autograd.grad((o * do).sum() + (S * dS).sum(), [ref[n] for n in names])
    exact = {"o": o.detach(), "ht": S.detach()}
    exact.update({"d" + n: g for n, g in zip(names, gref)})
    fin = {n: x[n].clone().requires_grad_(True) for n in names}
    cu = None
    if N > 1:
        cu = torch.tensor([0] + list(itertools.accumulate(lengths)), device=DEV, dtype=torch.long)
    fo, fS = fla_run(op, fin, scale, cu)
    gf = torch.autograd.grad((fo.float() * do.float()).sum() + (fS.float() * dS.float()).sum(),
                             [fin[n] for n in names], allow_unused=True)
    fla = {"o": fo.detach(), "ht": fS.detach()}
    fla.update({"d" + n: g for n, g in zip(names, gf) if g is not None})
    inputs = {n: x[n].double() for n in names}
    inputs["do"], inputs["dht"] = do, dS
    if cu is not None:
        inputs["cu_seqlens"] = cu
    return inputs, exact, fla


def write_inputs(path, inputs):
    with h5py.File(path, "w") as f:
        for n, t in inputs.items():
            f.create_dataset(n, data=t.cpu().numpy())


# CUDA errors that another process of a parallel sweep causes for a while (its f64 reference's
# autograd graph holds tens of GB at T = 4096): the run is tried again after a pause instead of
# losing the rest of its group's cases (2026-12-03: 16 processes, three groups lost that way).
TRANSIENT_CUDA = ("out of memory", "busy or unavailable")


def run_with_retries(cmd, attempts=4, pause_s=10.0, sleep=time.sleep):
    """subprocess.run(cmd) until it exits 0; a failure whose stderr names a TRANSIENT_CUDA error is
    run again after pause_s, 2 pause_s, ... (attempts in all); any other failure raises at once."""
    for attempt in range(1, attempts + 1):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode == 0:
            return r
        if attempt == attempts or not any(e in r.stderr for e in TRANSIENT_CUDA):
            raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}; attempt {attempt} of {attempts}):"
                               f" {r.stderr.strip()[:400]}")
        print(f"# {' '.join(cmd)}: a transient CUDA error (attempt {attempt} of {attempts}), again in"
              f" {pause_s * attempt:.0f} s: {r.stderr.strip()[:200]}", file=sys.stderr, flush=True)
        sleep(pause_s * attempt)


def run_ours(rewy, op, src, work, algo, policy, twin=False, device="cuda"):
    """rewy's CUDA kernels, or (twin) the CPU model of their bf16 rounding, on the inputs in `src`."""
    dst = os.path.join(work, f"{op}_{algo}_{policy}{'_twin' if twin else ''}.h5")
    cmd = [rewy, "op", "--in", src, "--out", dst, "--op", OUR_OP[op], "--backward", algo, "--policy", policy]
    cmd += ["--device", "cpu", "--bf16-twin"] if twin else ["--device", device]
    run_with_retries(cmd)
    with h5py.File(dst, "r") as f:
        return {n: torch.from_numpy(np.asarray(f[n])).double() for n in f.keys()}


def ratio(ours, ref):
    """ours / ref, with exact results (zero error) compared sensibly."""
    if ref != ref:  # no such measurement (nan): compares false against every bar
        return ref
    if ref > 0:
        return ours / ref
    return 1.0 if ours == 0 else float("inf")


def summarize(rows):
    """The per-op table: medians over draws, the worst per-draw ratios and their cases; returns the
    number of rows above a bar."""
    print(f"\n== same-input accuracy summary (medians over draws; worst = largest per-draw ours/FLA, and its case;"
          f" bar {BAR}) ==")
    print(f"{'op':9s} {'backward':8s} {'policy':9s} {'tensor':6s} {'ours':>9s} {'FLA':>9s} {'ratio':>6s} {'worst':>6s}"
          f" {'case':>16s} {'twin':>9s} {'o/twin':>6s}")
    above = 0
    for (op, algo, policy, t), v in rows.items():
        mo, mf, mt = (statistics.median(x[i] for x in v) for i in range(3))
        worst, worst_case = max((ratio(e, f), c) for e, f, _, c in v)
        worst_twin = max(ratio(e, tw) for e, _, tw, _ in v)  # nan (no twin) compares false
        bad = worst > BAR or worst_twin > 2
        flag = "  <-- above bar" if bad else ""
        above += bad
        print(f"{OUR_OP[op]:9s} {algo:8s} {policy:9s} {t:6s} {mo:9.2e} {mf:9.2e} {ratio(mo, mf):6.2f} {worst:6.2f}"
              f" {worst_case:>16s} {mt:9.2e} {worst_twin:6.2f}{flag}")
    draws = len({(op, c) for (op, *_), v in rows.items() for *_, c in v})
    print(f"same-input rows above a bar (worst draw: ours > {BAR}x FLA or > 2x twin): {above} of {len(rows)}"
          f" ({draws} op-case pairs)")
    return above


def read_same_lines(paths):
    """rows as main() collects them, from the SAME lines of earlier runs' logs."""
    rows = collections.defaultdict(list)
    for path in paths:
        with open(path) as f:
            for line in f:
                w = line.split()
                if len(w) != 12 or w[0] != "SAME" or w[10] != "twin":
                    continue  # exact-zero, FLA-failed and other lines
                op, case, _, algo, policy, t = w[1:7]
                rows[(op, algo, policy, t)].append((float(w[7]), float(w[8]), float(w[11]), case))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewy", help="the rewy binary (CUDA build)")
    ap.add_argument("--ops", default="delta,gdn,kda,gdn2")
    ap.add_argument("--cases", default="1024:h0", help="comma-separated cases: T[:h0] or v<L1>+<L2>+...[:h0]")
    ap.add_argument("--sweep", action="store_true", help=f"the part-1 case set ({SWEEP}), one seed per case")
    ap.add_argument("--H", type=int, default=16)
    ap.add_argument("--seeds", default=None, help="default 1,2,3 (1 with --sweep)")
    ap.add_argument("--work", default="/tmp/rewy-accuracy", help="HDF5 files (about 70 MB each at T = 1024, H = 16)")
    ap.add_argument("--device", default="cuda", help="where rewy runs (cpu: a check of this script)")
    ap.add_argument("--twin", type=int, default=1, help="also run the bf16 CPU twin (bar: ours <= 2x twin)")
    ap.add_argument("--summarize", nargs="+", metavar="LOG",
                    help="no measuring: the summary of the SAME lines in these logs (runs split over processes)")
    a = ap.parse_args()
    if a.summarize:
        summarize(read_same_lines(a.summarize))
        return 0
    if not a.rewy:
        ap.error("--rewy is required unless --summarize is given")
    cases = (SWEEP if a.sweep else a.cases).split(",")
    for c in cases:
        parse_case(c)  # a malformed case fails before any work
    seeds = [int(s) for s in (a.seeds or ("1" if a.sweep else "1,2,3")).split(",")]
    ops = [o if o != "deltanet" else "delta" for o in a.ops.split(",")]
    os.makedirs(a.work, exist_ok=True)
    print(f"same-input accuracy: H={a.H} D=128, cases {','.join(cases)}, seeds {seeds}; relative L2 error vs f64",
          flush=True)
    sweep_cases = SWEEP.split(",")
    rows = collections.defaultdict(list)  # (op, algo, policy, tensor) -> [(ours, fla, twin, case)]
    for op in ops:
        for ci, case in enumerate(cases):
            # a fresh draw per case, the same whichever process or list runs the case
            case_index = sweep_cases.index(case) if case in sweep_cases else len(sweep_cases) + ci
            for seed in seeds:
                seed = seed + 100 * case_index
                try:
                    inputs, exact, fla = draw(op, case, a.H, seed)
                except Exception as e:  # FLA (or the reference) failed for this op: say so, go on
                    print(f"SAME {op} {case} {seed} FLA-failed {repr(e)[:300]}", flush=True)
                    continue
                src = os.path.join(a.work, f"{op}_in.h5")
                write_inputs(src, inputs)
                torch.cuda.empty_cache()  # the reference's graph is freed: its cached blocks go back for our runs
                err = lambda got, ref: fla_accuracy.rel(got.to(ref.device).reshape(ref.shape), ref)
                for algo in ("rewy", "baseline"):
                    twin = run_ours(a.rewy, op, src, a.work, algo, "recompute", twin=True) if a.twin else {}
                    for policy in ("recompute", "save"):
                        ours = run_ours(a.rewy, op, src, a.work, algo, policy, device=a.device)
                        for t, ref in exact.items():
                            if t not in ours or t not in fla:
                                continue
                            if not ref.abs().max() > 0:  # e.g. dg at T = 1 without h0: no relative error exists
                                print(f"SAME {op} {case} {seed} {algo} {policy} {t} exact-zero ours-max"
                                      f" {ours[t].abs().max():.2e} fla-max {fla[t].abs().max():.2e}", flush=True)
                                continue
                            eo, ef = err(ours[t], ref), err(fla[t], ref)
                            et = err(twin[t], ref) if t in twin else float("nan")
                            rows[(op, algo, policy, t)].append((eo, ef, et, case))
                            print(f"SAME {op} {case} {seed} {algo} {policy} {t} {eo:.3e} {ef:.3e} {ratio(eo, ef):.3f}"
                                  f" twin {et:.3e}", flush=True)
                del inputs, exact, fla
                torch.cuda.empty_cache()
    summarize(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
