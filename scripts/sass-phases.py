#!/usr/bin/env python3
"""Instruction mix of one kernel's SASS, split at its phase-clock marks.

The chunk-parallel kernels (wy_prep, grad_chunk) read SR_CLOCKLO at each phase_mark
(REWY_KERNEL_TIMING=2 names the phases), so the static code between two reads is one phase. This
prints, per phase, the instruction count and the most frequent opcodes: where address arithmetic,
shared loads or exponentials pile up, next to the cycles REWY_KERNEL_TIMING=2 measured.

  scripts/sass-phases.py OBJECT KERNEL_SUBSTRING [--top 14]
  e.g. scripts/sass-phases.py build-gpu/kernels/CMakeFiles/rewy_kernels.dir/delta/cuda/variant_kda.cu.o \\
       grad_chunk_kernelILi2ELi128ELi128ELb1E
CUOBJDUMP names the tool (default: cuobjdump on PATH).
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("object")
    ap.add_argument("kernel", help="a substring of the kernel's mangled name")
    ap.add_argument("--top", type=int, default=14)
    a = ap.parse_args()
    tool = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    if not tool:
        sys.exit("sass-phases: cuobjdump not found (set CUOBJDUMP)")
    sass = subprocess.run([tool, "-sass", a.object], capture_output=True, text=True, check=True).stdout
    names, ops, inside = set(), [], False
    for line in sass.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            inside = a.kernel in m.group(1)
            if inside:
                names.add(m.group(1))
            continue
        if inside and re.match(r"\s+/\*[0-9a-f]{4,}\*/", line):
            t = re.sub(r"/\*[0-9a-f]+\*/", "", line).strip().rstrip(" ;").split()
            if t and t[0].startswith("@"):
                t = t[1:]
            if t:
                ops.append(" ".join(t))
    if len(names) != 1:
        sys.exit(f"sass-phases: {len(names)} kernels match {a.kernel!r}: {sorted(names)[:5]}")
    marks = [i for i, x in enumerate(ops) if "SR_CLOCKLO" in x]
    bounds = [0] + marks[1:] + [len(ops)]  # the first read is phase_start
    print(f"{names.pop()}: {len(ops)} instructions, {len(marks)} clock reads")
    for k, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        mix = collections.Counter(x.split()[0].split(".")[0] for x in ops[lo:hi])
        print(f"phase {k}: {hi - lo:5d}  " + " ".join(f"{op} {n}" for op, n in mix.most_common(a.top)))


if __name__ == "__main__":
    main()
