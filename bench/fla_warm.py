"""Compiles FLA's Triton kernels for the anchor shapes without timing anything: one forward and one
backward per (op, shape, policy). bench-vs-fla.sh runs one of these per op in parallel, with the
autotuning results not cached (TRITON_CACHE_AUTOTUNING=0), so that the timed run afterwards finds
every configuration compiled in TRITON_CACHE_DIR and autotunes on a quiet GPU by benchmarking only.

    PYTHONPATH=<dir with FLA's fla/ and fla_anchor.py> python3 bench/fla_warm.py --ops gdn --shapes 0,...,5
"""
import argparse
import time

import torch

import fla_anchor


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default="delta,gdn,kda,gdn2")
    ap.add_argument("--shapes", default="0,1,2,3,4,5")
    ap.add_argument("--policies", default="recompute,save")
    a = ap.parse_args()
    for op in a.ops.split(","):
        f = fla_anchor.get_fn(op)
        for si in map(int, a.shapes.split(",")):
            for pol in a.policies.split(","):
                if pol == "save" and op not in ("kda", "gdn2"):
                    continue  # as fla_anchor.py: only KDA/GDN2 have a full-saving switch
                kw = {"disable_recompute": True} if pol == "save" else {}
                t0 = time.time()
                try:
                    ins = fla_anchor.make_inputs(op, *fla_anchor.SHAPES[si], "cuda", torch.bfloat16)
                    o = f(**ins, **kw)[0]
                    torch.autograd.grad(o, list(ins.values()), torch.randn_like(o))
                    torch.cuda.synchronize()
                    print(f"warm {op} shape {si} {pol}: {time.time() - t0:.0f} s", flush=True)
                except Exception as e:  # the timed run reports it too; the warm-up goes on
                    print(f"warm {op} shape {si} {pol} failed: {e!r}"[:300], flush=True)
                ins = o = None
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
