#!/usr/bin/env python3
"""Our own times between two builds: old ms / new ms per op, direction and policy (bench gates,
ReWY backward), geomean and worst over the shapes both CSVs hold. FLA's times move between device
calls far more than ours (docs/perf-delta.md), so progress between commits is read here, from two
bench_delta --csv files (e.g. docs/measurements/*/ours_*.csv), not from two FLA ratios.

  python3 bench/compare_ours.py OLD.csv NEW.csv [--gates bench] [--algo rewy]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import geomean, load_ours  # noqa: E402


def load(path, gates, algo):
    """{(op, policy, dir, B, T, H): median ms} of one gate setting and backward algorithm."""
    try:
        rows = load_ours(path)
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"compare_ours: cannot read {path} as a bench_delta --csv file: {e}")
    return {(op, pol, d, B, T, H): ms for (op, B, T, H, pol, g, d, a), ms in rows.items()
            if g == gates and (d == "fwd" or a == algo)}


def compare(old, new):
    """[(op, policy, dir, geomean old/new, worst old/new, shapes)] over the keys both hold."""
    groups = {}
    for key in sorted(old.keys() & new.keys()):
        groups.setdefault(key[:3], []).append(old[key] / new[key])
    out = []
    for (op, pol, d), xs in sorted(groups.items()):
        out.append((op, pol, d, geomean(xs), min(xs), len(xs)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--gates", default="bench", help="bench, realistic or weak")
    ap.add_argument("--algo", default="rewy", help="backward algorithm: rewy or baseline")
    a = ap.parse_args()
    rows = compare(load(a.old, a.gates, a.algo), load(a.new, a.gates, a.algo))
    if not rows:
        sys.exit("compare_ours: the two files share no (op, policy, direction, shape) row")
    print(f"old / new ms ({a.gates} gates, {a.algo} backward): above 1 the new build is faster")
    print(f"{'op':9s} {'policy':9s} {'dir':4s} {'geomean':>8s} {'worst':>7s} {'shapes':>6s}")
    for op, pol, d, g, w, n in rows:
        print(f"{op:9s} {pol:9s} {d:4s} {g:8.3f} {w:7.3f} {n:6d}")


if __name__ == "__main__":
    main()
