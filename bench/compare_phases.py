#!/usr/bin/env python3
"""Two builds' kernel timings side by side: the REWY_KERNEL_TIMING tables (µs per call of every
kernel) and, where both runs had REWY_KERNEL_TIMING=2, each kernel's cycles per phase (a CTA's
for the chunk-parallel kernels, a chunk step's for the sequential ones). Feed it the stderr of
the same bench_delta command under two builds, e.g. a base commit built beside the change in one
device call (NOTES.md, "First calls"):

  REWY_KERNEL_TIMING=2 build-gpu/bench/bench_delta --ops deltanet,gdn,kda,gdn2 --shapes 0 \\
      --policies recompute --gates bench --samples 3 > new.txt 2>&1
  python3 bench/compare_phases.py old.txt new.txt [--kernels grad_chunk,state_bwd]

old / new above 1: the new build is faster.
"""
import argparse
import re
import sys

KERNEL_LINE = re.compile(r"^\s+(\S+)\s+(\d+) calls\s+([\d.]+) ms total\s+([\d.]+) us/call")
PHASE_LINE = re.compile(r"^\s+(\S+)\s+(\d+) cycles:((?: \| .+)+)$")
PHASE_PART = re.compile(r"^(.+) (\d+) \(\d+%\)$")


def parse(path):
    """({kernel: µs per call}, {kernel: [(phase, cycles per CTA)]}) of one run's output; a later
    table of the same kernel replaces an earlier one."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        sys.exit(f"compare_phases: cannot read {path}: {e.strerror}")
    times, phases = {}, {}
    for line in lines:
        m = KERNEL_LINE.match(line)
        if m:
            times[m.group(1)] = float(m.group(4))
            continue
        m = PHASE_LINE.match(line)
        if m:
            parts = []
            for seg in m.group(3).split(" | ")[1:]:
                pm = PHASE_PART.match(seg.strip())
                if not pm:
                    sys.exit(f"compare_phases: {path}: cannot read the phase '{seg.strip()}' of {m.group(1)}")
                parts.append((pm.group(1), int(pm.group(2))))
            phases[m.group(1)] = parts
    if not times and not phases:
        sys.exit(f"compare_phases: {path} holds no REWY_KERNEL_TIMING table (run bench_delta with "
                 "REWY_KERNEL_TIMING=1 or 2 and keep its stderr)")
    return times, phases


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--kernels", default="", help="comma-separated name prefixes to keep (default: all)")
    a = ap.parse_args()
    keep = [k for k in a.kernels.split(",") if k]
    wanted = lambda name: not keep or any(name.startswith(k) for k in keep)  # noqa: E731
    old_t, old_p = parse(a.old)
    new_t, new_p = parse(a.new)

    both = [k for k in sorted(old_t.keys() & new_t.keys()) if wanted(k)]
    if both:
        print(f"{'kernel':44s} {'old us':>9s} {'new us':>9s} {'old/new':>8s}")
        for k in both:
            print(f"{k:44s} {old_t[k]:9.1f} {new_t[k]:9.1f} {old_t[k] / new_t[k]:8.3f}")
    for side, only in (("old", old_t.keys() - new_t.keys()), ("new", new_t.keys() - old_t.keys())):
        only = sorted(k for k in only if wanted(k))
        if only:
            print(f"only in {side}: {', '.join(only)}")

    for k in sorted(old_p.keys() & new_p.keys()):
        if not wanted(k):
            continue
        o, n = dict(old_p[k]), dict(new_p[k])
        to, tn = sum(o.values()), sum(n.values())
        print(f"\n{k}: {to} -> {tn} cycles a CTA ({to / tn:.3f})")
        for name, _ in new_p[k]:
            if name in o:
                print(f"  {name:16s} {o[name]:8d} -> {n[name]:8d} {n[name] - o[name]:+8d}")
            else:
                print(f"  {name:16s} {'-':>8s} -> {n[name]:8d} (new phase)")
        for name, _ in old_p[k]:
            if name not in n:
                print(f"  {name:16s} {o[name]:8d} -> {'-':>8s} (gone)")


if __name__ == "__main__":
    main()
