"""FLA's timed side of a side-by-side run in one Python process, so that its autotuning is paid
once for the timing and the kernel profile.

    PYTHONPATH=<dir with FLA's fla/ and fla_anchor.py> python3 bench/fla_session.py \
        --ops delta,kda --shapes 0,...,5 --policies recompute,save --out DIR [--profile-shape 0]

Runs fla_anchor.py (writes DIR/fla_anchor.csv), then bench/fla_profile.py at one shape.
(Same-input accuracy, bench/accuracy_vs_fla.py, runs beside FLA's compilation in
scripts/bench-vs-fla.sh's first phase: it does not need a quiet GPU.)
"""
import argparse
import sys
import time

import fla_anchor
import fla_profile


def stage(name, module, argv):
    t0 = time.time()
    print(f"== fla_session: {name}: {' '.join(argv)}", flush=True)
    sys.argv = [name] + argv
    try:
        module.main()
    except Exception as e:  # one failed stage must not hide the others' results
        print(f"== fla_session: {name} failed: {e!r}"[:400], flush=True)
    print(f"== fla_session: {name} took {time.time() - t0:.0f} s", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default="delta,gdn,kda,gdn2")
    ap.add_argument("--shapes", default="0,1,2,3,4,5")
    ap.add_argument("--policies", default="recompute,save")
    ap.add_argument("--out", default=".")
    ap.add_argument("--anchor", type=int, default=1)
    ap.add_argument("--profile-shape", type=int, default=-1, help="-1: no profile")
    a = ap.parse_args()
    if a.anchor:
        stage("fla_anchor", fla_anchor, ["--ops", a.ops, "--shapes", a.shapes, "--policies", a.policies, "--out", a.out])
    if a.profile_shape >= 0:
        stage("fla_profile", fla_profile, ["--ops", a.ops, "--shape", str(a.profile_shape)])


if __name__ == "__main__":
    main()
