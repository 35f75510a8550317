"""Where FLA's time goes: its chunkwise forward and backward kernel by kernel on the GPU
(torch.profiler, after warm-up and autotuning), for DeltaNet, GDN, KDA and GDN2 at one shape.

    PYTHONPATH=<dir with FLA's fla/ and fla_anchor.py> python3 bench/fla_profile.py [--shape 0] [--ops ...]

Prints, per op and direction, each kernel's mean time per call (µs), its launches per call and its
share; the total is the sum of kernel times (launch gaps excluded).
"""
import argparse
import collections

import torch
from torch.profiler import ProfilerActivity, profile

import fla_anchor  # input distributions and FLA entry points of the reference table


def kernel_table(fn, reps):
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    acc = collections.defaultdict(lambda: [0.0, 0])
    for ev in prof.events():
        if ev.device_type != torch.autograd.DeviceType.CUDA:
            continue
        t = getattr(ev, "device_time", None)
        if t is None:
            t = ev.cuda_time
        acc[ev.name][0] += t
        acc[ev.name][1] += 1
    rows = sorted(((n, t / reps, c / reps) for n, (t, c) in acc.items()), key=lambda r: -r[1])
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default="delta,gdn,kda,gdn2")
    ap.add_argument("--shape", type=int, default=0)
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args()
    B, T, H, D = fla_anchor.SHAPES[a.shape]
    for op in a.ops.split(","):
        f = fla_anchor.get_fn(op)
        ins = fla_anchor.make_inputs(op, B, T, H, D, "cuda", torch.bfloat16)
        o = f(**ins)[0]
        do = torch.randn_like(o)
        args = list(ins.values())
        for _ in range(3):  # autotune
            torch.autograd.grad(o, args, do, retain_graph=True)
        fwd = kernel_table(lambda: f(**{k: t.detach() for k, t in ins.items()}), a.reps)
        bwd = kernel_table(lambda: torch.autograd.grad(o, args, do, retain_graph=True), a.reps)
        for direction, rows in (("fwd", fwd), ("bwd", bwd)):
            total = sum(r[1] for r in rows)
            print(f"PROFILE {op} shape=({B},{T},{H},{D}) {direction} total {total:.1f} us", flush=True)
            for name, us, calls in rows:
                print(f"PROFILE   {us:9.1f} us  {100 * us / total:5.1f}%  x{calls:.0f}  {name[:110]}", flush=True)
        del o, do, ins
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
