"""FLA's side of a side-by-side run in one Python process, so that its autotuning (50-210 s per op
and shape class on first use) is paid once for the timing, the kernel profile and the accuracy run.

    PYTHONPATH=<dir with FLA's fla/, fla_anchor.py, fla_accuracy.py> python3 bench/fla_session.py \
        --ops delta,kda --shapes 0,...,5 --policies recompute,save --out DIR \
        [--profile-shape 0] [--accuracy --rewy BUILD/rewy --seeds 1,2,3 --acc-T 1024 --acc-H 16]

Runs fla_anchor.py (writes DIR/fla_anchor.csv), then bench/fla_profile.py at one shape, then
bench/accuracy_vs_fla.py (identical inputs for FLA and rewy). The accuracy run uses H = 16 by
default, the anchor's head count, so that it reuses the anchor's tuned kernels.
"""
import argparse
import sys
import time

import fla_anchor
import fla_profile
import accuracy_vs_fla


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
    ap.add_argument("--accuracy", action="store_true")
    ap.add_argument("--acc-ops", help="ops of the accuracy run (default: --ops)")
    ap.add_argument("--rewy")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--acc-T", default="1024")
    ap.add_argument("--acc-H", default="16")
    ap.add_argument("--work", help="HDF5 files of the accuracy run (default: accuracy_vs_fla.py's)")
    a = ap.parse_args()
    if a.anchor:
        stage("fla_anchor", fla_anchor, ["--ops", a.ops, "--shapes", a.shapes, "--policies", a.policies, "--out", a.out])
    if a.profile_shape >= 0:
        stage("fla_profile", fla_profile, ["--ops", a.ops, "--shape", str(a.profile_shape)])
    if a.accuracy:
        stage("accuracy_vs_fla", accuracy_vs_fla, ["--rewy", a.rewy, "--ops", a.acc_ops or a.ops, "--seeds", a.seeds, "--T", a.acc_T,
                                                   "--H", a.acc_H] + (["--work", a.work] if a.work else []))


if __name__ == "__main__":
    main()
