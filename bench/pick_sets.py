#!/usr/bin/env python3
"""Each variant's experiment set from whole-op timings of one build (scripts/device-decide.sh):
the set with the best Recompute ReWY backward geomean of default ms / set ms (bench gates, the
shapes both CSVs hold; --direction fwd: the forward's, both: the geomean of the two), if above
--min; a set named with @v1,v2 competes only for those variants (it changes no other's kernels,
where noise alone could pick it). The last line printed is the
REWY_EXPERIMENTS value, set:variant pairs (empty where no set wins).

  python3 bench/pick_sets.py DEFAULT.csv NAME=SET.csv[@v1,v2] ... [--variants gdn,kda,gdn2] [--min 1.005]
                             [--direction bwd|fwd|both]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_ours import compare, load  # noqa: E402


def parse_set(arg):
    """NAME=PATH[@v1,v2] -> (name, path, variants or None)."""
    name, sep, rest = arg.partition("=")
    if not sep or not name or not rest:
        sys.exit(f"pick_sets: '{arg}' is not NAME=CSV[@variant,...]")
    path, _, only = rest.partition("@")
    return name, path, [v for v in only.split(",") if v] or None


def pick(default, sets, variants, floor, direction="bwd"):
    """{variant: (set name, geomean)} of the winning sets."""
    best = {}
    for name, path, only in sets:
        per_dir = {}  # op -> {direction: geomean}
        for op, pol, d, g, _, _ in compare(default, load(path, "bench", "rewy")):
            if pol == "recompute" and op in variants and not (only and op not in only):
                per_dir.setdefault(op, {})[d] = g
        for op, gs in per_dir.items():
            if direction == "both":
                if "fwd" not in gs or "bwd" not in gs:
                    continue
                g = (gs["fwd"] * gs["bwd"]) ** 0.5
            elif direction in gs:
                g = gs[direction]
            else:
                continue
            if g > max(floor, best.get(op, (None, 0.0))[1]):
                best[op] = (name, g)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("default")
    ap.add_argument("sets", nargs="*", help="NAME=CSV[@variant,...]")
    ap.add_argument("--variants", default="gdn,kda,gdn2")
    ap.add_argument("--min", type=float, default=1.005, help="a set must beat the default by more than this")
    ap.add_argument("--direction", choices=("bwd", "fwd", "both"), default="bwd",
                    help="what a set is judged by: the Recompute backward, forward, or the geomean of both")
    a = ap.parse_args()
    variants = [v for v in a.variants.split(",") if v]
    best = pick(load(a.default, "bench", "rewy"), [parse_set(s) for s in a.sets], variants, a.min, a.direction)
    what = {"bwd": "Recompute backward", "fwd": "Recompute forward", "both": "Recompute forward and backward"}[a.direction]
    for v in variants:
        name, g = best.get(v, ("default", None))
        print(f"{v:9s} {name}" + (f" ({g:.3f}x {what})" if g else ""))
    print(",".join(f"{best[v][0]}:{v}" for v in variants if v in best))


if __name__ == "__main__":
    main()
