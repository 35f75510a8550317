#!/usr/bin/env python3
"""Memory floors of rewy's delta-rule pipeline, kernel by kernel, and what they allow against FLA.

Each kernel's floor is the bytes it must move in global memory (what it reads and writes, counted
from the kernels in kernels/delta/cuda/) over a bandwidth; a tensor that several V-slices of a
sequential kernel read counts once (L2 serves the other slices). The sum over a direction's
kernels is the floor of this decomposition: no tuning of the kernels as they are split now gets
below it. Against FLA's measured time (an fla_anchor.csv) it gives the largest speedup the
decomposition allows, to set beside part 2's bars (backward 2.5x DeltaNet/GDN, 3.5x KDA/GDN2;
forward 3x). Fusions that keep a tensor on chip remove its write and its reads: --drop lists
them.

  python3 bench/design_floor.py [--shape 0] [--bw 4.3] [--fla FLA.csv] [--drop Hs,dHs]
"""
import argparse
import csv

SHAPES = [(8, 2048, 16, 128), (4, 4096, 16, 128), (2, 8192, 16, 128), (1, 16384, 16, 128), (8, 4096, 32, 128),
          (1, 32768, 32, 128)]
OPS = ("deltanet", "gdn", "kda", "gdn2")
C = 64  # chunk


def sizes(op, K, V):
    """Bytes per token and head of every tensor the pipeline touches."""
    gated, vec = op != "deltanet", op in ("kda", "gdn2")
    g = 4 * K if vec else (4 if gated else 0)  # fp32 log-decay [tok][H](K)
    coef = 2 * K + 2 * V if op == "gdn2" else 2  # GDN2's b, w (bf16); the others' beta
    return {
        "q": 2 * K, "k": 2 * K, "v": 2 * V, "coef": coef, "g": g,
        "P": 2 * C, "T": 2 * C, "Tb": 2 * C, "W": 2 * K, "U": 2 * V, "gexp": 4 * K / C,
        "Kt": 2 * K,  # KDA's K ⊙ Γ (its fused forward: wy_prep_split writes it in W's place)
        "rb": 4,  # β of the rows (fp32), which the passes take on D's and X's rows in place of 𝒯 Diag(β)
        # Q̂ and K̄ are copies only for gated variants (without gates they are q and k themselves);
        # Q̂'s second bf16 term exists for gated variants where states are kept.
        "Qg": 2 * K if gated else 0, "Kg": 2 * K if gated else 0, "Qlo": 2 * K if gated else 0,
        "E": 2 * V, "Hs": 2 * K * V / C, "dHs": 2 * K * V / C, "dE": 2 * V, "dO": 2 * V, "o": 2 * V,
        "dq": 2 * K, "dk": 2 * K, "dv": 2 * V, "dcoef": coef, "dg": g,
        # reads of inputs the sequential kernels take instead of copies (no gates: q, k; GDN: k, g)
        "q_in": 2 * K, "k_in": 2 * K, "g_in": g,
        # GDN's row gates e^G, e^{γ−G} (fp32), which its replay state pass takes with k instead of K̄
        "rows": 8 if op == "gdn" else 0,
    }


def kernels(op):
    """(name, direction, reads, writes) of each kernel; names as in sizes()."""
    gated, scalar = op != "deltanet", op == "gdn"
    qh = "Qg" if gated else "q_in"
    kb = "Kg" if gated else "k_in"
    kb_bwd = ["k_in", "g_in"] if scalar else [kb]  # GDN's state_bwd takes raw k and g (fp32 decay)
    copies = ["Qg", "Kg"] if gated else []
    # DeltaNet and GDN at V-slices of 64/128 (the benchmark shapes but (1, 16384, 16)'s forward):
    # the state passes form E = 𝒯 Diag(β) (V − Γ ⊙ K H) = 𝒯 (Diag(β) D) from 𝒯, β of the rows
    # ("rb"), k and v, so W and U are never formed in the forward (fused_wu) nor 𝒯 Diag(β) (β on the
    # rows: beta_on_rows in delta_cuda.cu; DeltaNet at up to 32 pairs still writes and reads 𝒯 Diag(β),
    # "Tb", the same bytes less rb's); the Recompute forward keeps 𝒯 and rb (Saved::Tbeta at 𝒯,
    # row_betas), the replay forms no U (fused_replay, K = V = 128) and no W (state_bwd forms Wᵀ∂E
    # from 𝒯, rb and k: replay_no_w) and keeps e^γ and GDN's row gates too, so neither backward runs
    # wy_replay. (At (1, 16384, 16) the forward's slices are 32, an unfused pass reading W and U:
    # its wy_prep keeps the rows' β and the gates for the fused replay; this count does not model
    # that forward.) GDN's passes take q and k with the row gates (fused_gate).
    if op in ("deltanet", "gdn"):
        rows = ["rows"] if scalar else []
        fwd = [
            ("wy_prep", "fwd", ["q", "k", "coef", "g"], ["P", "T", "rb", "gexp"] + rows),
            ("state_fwd (output)", "fwd", ["T", "rb", "k_in", "q_in", "P", "v", "gexp"] + rows, ["o"]),
        ]
        # (no Q̂ or its second term where state_bwd runs V-slices of 64 or 128, every benchmark
        # shape: q_from_row_gates in delta_cuda.cu; state_bwd forms Q̂ from q and the row gates)
        replay = [
            ("state_fwd (replay)", "bwd", ["T", "rb", "k_in", "v", "gexp"] + rows, ["Hs", "E"]),
        ]
    elif op == "kda":
        # KDA's Recompute forward at V-slices of 64/128 where wy_prep runs before the pass (the
        # benchmark's many-pair shapes; Config::fuse_kda_forward): E = 𝒯 (Diag(β) (V − (K ⊙ Γ) H)) in
        # the pass, wy_prep writing K ⊙ Γ ("Kt") and β of the rows, no W, U or 𝒯 Diag(β). (Beside wy_prep, at the
        # few-pair shapes, the forward stays unfused, as GDN2's below; this count does not model it.)
        fwd = [
            ("wy_prep", "fwd", ["q", "k", "coef", "g"], ["P", "T", "rb", "Kt", "gexp"] + copies),
            ("state_fwd (output)", "fwd", ["T", "rb", "Kt", kb, qh, "P", "v", "gexp"], ["o"]),
        ]
    else:
        fwd = [
            ("wy_prep", "fwd", ["q", "k", "v", "coef", "g"], ["P", "T", "W", "U", "gexp"] + copies),
            ("state_fwd (output)", "fwd", ["W", kb, qh, "P", "U", "gexp"], ["o"]),
        ]
    if op in ("kda", "gdn2"):
        # the Recompute forward keeps P beside 𝒯: the replay forms no C×C product (q: for Q̂)
        replay = [
            ("wy_replay", "bwd", ["q", "k", "v", "coef", "g", "T"], ["W", "U", "gexp"] + copies + ["Qlo"]),
            ("state_fwd (replay)", "bwd", ["W", kb, "U", "gexp"], ["Hs", "E"]),
        ]
    # (DeltaNet's and GDN's state_bwd: 𝒯 and the rows' β in W's place, with k, which it reads anyway)
    w_bwd = ["T", "rb"] if op in ("deltanet", "gdn") else ["W"]
    return fwd + replay + [
        ("state_bwd", "bwd", w_bwd + (["q_in", "rows"] if scalar else [qh]) + ["P", "dO", "gexp"] + kb_bwd
         + (["Qlo"] if gated and not scalar else []), ["dHs", "dE"]),
        # ReWY at K = V = 128 (∂A = −stril(R_U Eᵀ), the E-form since the thirty-seventh session): W and
        # U are not read; E and ∂H⁺ read twice (phase 1 and phase 5)
        ("grad_chunk", "bwd", ["q", "k", "g", "T", "Hs", "dHs", "E", "dO", "dE", "v", "coef", "E", "dHs"],
         ["dq", "dk", "dv", "dcoef", "dg"]),
    ]


def kernel_bytes(op, K, V, drop=()):
    """(name, direction, bytes read, bytes written) per token and head of each kernel, without the
    tensors in drop (kept on chip)."""
    sz = sizes(op, K, V)
    return [(name, direction, sum(sz[t] for t in reads if t not in drop), sum(sz[t] for t in writes if t not in drop))
            for name, direction, reads, writes in kernels(op)]


def load_fla(path):
    out = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if r.get("policy") != "recompute" or r.get("error"):
                continue
            op = {"delta": "deltanet"}.get(r["op"], r["op"])
            out[(op, int(r["B"]), int(r["T"]), int(r["H"]))] = (float(r["fwd_ms"]), float(r["bwd_ms"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", type=int, default=0, help="index into the six benchmark shapes")
    ap.add_argument("--bw", type=float, default=4.3, help="bandwidth in TB/s (the plan's measured ceiling)")
    ap.add_argument("--fla", help="fla_anchor.csv of a device call: FLA's recompute times")
    ap.add_argument("--drop", default="", help="tensors kept on chip by a fusion (comma-separated), e.g. Hs,dHs")
    ap.add_argument("--ops", default=",".join(OPS))
    a = ap.parse_args()
    B, T, H, D = SHAPES[a.shape]
    drop = {x for x in a.drop.split(",") if x}
    unknown = drop - set(sizes("kda", D, D))
    if unknown:
        ap.error(f"--drop: unknown tensor(s) {sorted(unknown)}; known: {sorted(sizes('kda', D, D))}")
    fla = load_fla(a.fla) if a.fla else {}
    tokens = B * T * H
    print(f"shape {a.shape} (B, T, H, D) = {SHAPES[a.shape]}, {a.bw} TB/s" + (f", kept on chip: {sorted(drop)}" if drop else ""))
    for op in a.ops.split(","):
        if op not in OPS:
            ap.error(f"unknown op {op!r}; known: {', '.join(OPS)}")
        totals = {"fwd": 0.0, "bwd": 0.0}
        print(f"\n{op}")
        for name, direction, rd, wr in kernel_bytes(op, D, D, drop):
            rd, wr = rd * tokens, wr * tokens
            us = (rd + wr) / (a.bw * 1e12) * 1e6
            totals[direction] += us
            print(f"  {direction}  {name:20s} reads {rd / 1e6:7.0f} MB  writes {wr / 1e6:6.0f} MB  floor {us:6.0f} us")
        for direction in ("fwd", "bwd"):
            line = f"  {direction} floor of this decomposition: {totals[direction]:6.0f} us"
            f = fla.get((op, B, T, H))
            if f:
                ms = f[0] if direction == "fwd" else f[1]
                line += f"; FLA {ms:.3f} ms: at most {ms * 1e3 / totals[direction]:.2f}x FLA"
            print(line)


if __name__ == "__main__":
    main()
