"""Side-by-side table of rewy's CUDA delta-rule kernels and FLA, from one device call.

    python3 bench/side_by_side.py --ours OURS.csv --fla FLA.csv [--acc OURS_ACC.txt]

OURS.csv comes from bench_delta --csv, FLA.csv from fla_anchor.py (same call). Speedup = FLA ms /
our ms. Prints per op and shape the forward and backward (ReWY) times and speedups with each op's
geometric mean, the ReWY-vs-baseline ablation of our backward, the realistic-gate rows, and, when
given, our accuracy against the bf16 twin (bar 2); the comparison with FLA's accuracy on identical
inputs is bench/accuracy_vs_fla.py's.
"""
import argparse
import csv
import math

OPS = {"delta": "deltanet", "gdn": "gdn", "kda": "kda", "gdn2": "gdn2"}


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def load_ours(path):
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            key = (r["op"], int(r["B"]), int(r["T"]), int(r["H"]), r["policy"], r["gates"], r["dir"], r["algo"])
            rows[key] = float(r["median_ms"])
    return rows


def load_fla(path):
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if not r.get("fwd_ms"):
                continue
            op = OPS.get(r["op"], r["op"])
            rows[(op, int(r["B"]), int(r["T"]), int(r["H"]), r["policy"])] = (float(r["fwd_ms"]), float(r["bwd_ms"]))
    return rows


def speed_tables(ours, fla):
    shapes = sorted({(k[1], k[2], k[3]) for k in ours}, key=lambda s: (s[0] * s[1] * s[2], -s[0]))
    ops = [o for o in ("deltanet", "gdn", "kda", "gdn2") if any(k[0] == o for k in ours)]
    for gates in ("bench", "realistic"):
        for pol in ("recompute", "save"):
            lines, any_row = [], False
            lines.append(f"\n== {pol} policy, {gates} gates: ms (speedup = FLA/ours; FLA at its {('default' if pol == 'recompute' else 'save')} policy, bench gates) ==")
            lines.append(f"{'op':9s} {'shape':18s} {'fwd ours':>9s} {'FLA':>8s} {'x':>6s} | {'bwd ours':>9s} {'FLA':>8s} {'x':>6s} | {'baseline':>9s} {'rewy/bl':>7s}")
            for op in ops:
                fx, bx, ab = [], [], []
                for (B, T, H) in shapes:
                    f = ours.get((op, B, T, H, pol, gates, "fwd", "-"))
                    b = ours.get((op, B, T, H, pol, gates, "bwd", "rewy"))
                    bl = ours.get((op, B, T, H, pol, gates, "bwd", "baseline"))
                    if f is None and b is None:
                        continue
                    any_row = True
                    fp = "save" if pol == "save" and op in ("kda", "gdn2") else "recompute"
                    ff, fb = fla.get((op, B, T, H, fp), (None, None))
                    sf = ff / f if ff and f else None
                    sb = fb / b if fb and b else None
                    abl = bl / b if bl and b else None
                    fx.append(sf), bx.append(sb), ab.append(abl)
                    fmt = lambda x, w=8, p=3: f"{x:{w}.{p}f}" if x is not None else f"{'-':>{w}s}"
                    lines.append(f"{op:9s} {f'({B},{T},{H},128)':18s} {fmt(f, 9)} {fmt(ff)} {fmt(sf, 6, 2)} | {fmt(b, 9)} {fmt(fb)} {fmt(sb, 6, 2)} | {fmt(bl, 9)} {fmt(abl, 7, 2)}")
                if not fx:  # no row of this op under these gates (realistic gates: KDA, GDN2 only)
                    continue
                gf, gb, ga = geomean(fx), geomean(bx), geomean(ab)
                lines.append(f"{op:9s} {'geomean':18s} {'':9s} {'':8s} {gf:6.2f} | {'':9s} {'':8s} {gb:6.2f} | {'':9s} {ga:7.2f}")
                mins = [x for x in fx if x], [x for x in bx if x]
                lines.append(f"{op:9s} {'min':18s} {'':9s} {'':8s} {min(mins[0]) if mins[0] else float('nan'):6.2f} | {'':9s} {'':8s} {min(mins[1]) if mins[1] else float('nan'):6.2f} |")
            if any_row:
                print("\n".join(lines))


def load_acc(path):
    acc = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 7 and p[0] == "ACC":
                acc[(p[1], p[2], p[3], p[4])] = (float(p[5]), float(p[6]))
    return acc


def accuracy_table(ours):
    print("\n== accuracy: relative L2 error vs f64 (delta_accuracy: B=1, T=1024, H=4, D=128); bar: <= 2x bf16 twin ==")
    fails = 0
    for (op, algo, pol, t), (e, twin) in sorted(ours.items()):
        r_twin = e / twin if twin > 0 else float("inf")
        fails += r_twin > 2.0
        flag = "" if r_twin <= 2.0 else "  <-- above bar"
        print(f"{op:9s} {algo:8s} {pol:9s} {t:6s} ours {e:.2e}  twin {twin:.2e}  ours/twin {r_twin:5.2f}{flag}")
    print(f"accuracy rows above the bar: {fails}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True)
    ap.add_argument("--fla", required=True)
    ap.add_argument("--acc")
    a = ap.parse_args()
    speed_tables(load_ours(a.ours), load_fla(a.fla))
    if a.acc:  # against FLA: bench/accuracy_vs_fla.py, on identical inputs
        accuracy_table(load_acc(a.acc))


if __name__ == "__main__":
    main()
