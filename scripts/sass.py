#!/usr/bin/env python3
"""SASS of the delta-rule kernels, read with cuobjdump (CUOBJDUMP names it; default: on PATH).

  scripts/sass.py sizes [BUILD]            instructions (16 bytes each) of every kernel at K = V = 128
  scripts/sass.py phases OBJECT KERNEL     one kernel's instruction mix per phase [--top 14]
  scripts/sass.py same OLD.o NEW.o         per kernel: identical SASS, registers renamed only, or not
      [--rename PATTERN=REPL ...]          new names rewritten first (re.sub), for a kernel that
                                           gained a template argument, e.g.
                                           '(wy_prep_kernelI.*)ELb0EEEv=\\1EEEv'

`same` is how a refactor shows that it leaves device code alone without a GPU. Compile both trees'
variant files with the build's nvcc command (`ninja -t commands`) from directories whose paths
have the same length (with -lineinfo the source path reaches ptxas and can change register
allocation), e.g. the base from `git archive BASE | tar -x -C /tmp/hd000` beside /work/main. ptxas
is not always deterministic (DeltaNet's 8-warp wy_prep kernels differed between two compiles of one
source, 2026-11-30): compile the base twice to see which kernels vary on their own.

The chunk-parallel kernels (wy_prep, grad_chunk) are straight-line code run once per CTA at one or
two CTAs an SM: past the SM's instruction cache they stall on fetch (GDN2's grad_chunk at 149 KB
spent half its cycles there, docs/perf-delta.md), so watch `sizes` as features land. They read
SR_CLOCKLO at each phase_mark (REWY_KERNEL_TIMING=2 names the phases), so `phases` splits the code
there: where address arithmetic, shared loads or exponentials pile up, beside the measured cycles.
  e.g. scripts/sass.py phases build-gpu/kernels/CMakeFiles/rewy_kernels.dir/delta/cuda/variant_kda.cu.o \\
       grad_chunk_kernelILi2ELi128ELi128ELb1E
Without cuobjdump (or its nvdisasm): `pip download --no-deps nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm`,
unzip both, point CUOBJDUMP at nvidia/cu13/bin/cuobjdump and put that folder on PATH.
"""
import argparse
import collections
import glob
import os
import re
import shutil
import subprocess
import sys


def kernels(obj):
    """{mangled name: [instruction text, ...]} of one object file."""
    tool = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    if not tool:
        sys.exit("sass: cuobjdump not found (set CUOBJDUMP)")
    out = subprocess.run([tool, "-sass", obj], capture_output=True, text=True, check=True).stdout
    found, cur = {}, None
    for line in out.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            cur = found.setdefault(m.group(1), [])
        elif cur is not None and re.match(r"\s+/\*[0-9a-f]{4,}\*/", line):
            t = re.sub(r"/\*[0-9a-f]+\*/", "", line).strip().rstrip(" ;").split()
            if t and t[0].startswith("@"):
                t = t[1:]
            if t:
                cur.append(" ".join(t))
    return found


K128_V128 = re.compile(r"ILi[0-9]ELi128ELi128E")  # <VAR, K = 128, V = 128, ...>


def readable(name):
    """grad_chunk rewy 8w, wy_prep 16w, wy_replay 8w, state_fwd 64 out, ... from the template tail
    after <VAR, 128, 128 (the chunk-parallel kernels' last argument is their thread count)."""
    tail = re.sub(r"EEvNS1_11DeltaParamsE$", "", K128_V128.split(name, maxsplit=1)[-1])
    a = re.sub(r"L[ib]", "", tail).replace("E", " ").split()
    warps = lambda threads: f" {int(threads) // 32}w"
    if "grad_chunk" in name:
        return "grad_chunk " + ("rewy" if a[0] == "1" else "baseline") + warps(a[1])
    for kernel in ("wy_prep", "wy_replay"):
        if f"{kernel}_kernel" in name:
            return kernel + warps(a[0])
    if "state_fwd" in name:
        return f"state_fwd {a[0]} " + (("out_store" if a[2] == "1" else "out") if a[1] == "1" else "replay")
    if "state_bwd" in name:
        return f"state_bwd {a[0]}"
    return name


def sizes(build):
    objs = sorted(glob.glob(f"{build}/kernels/**/variant_*.cu.o", recursive=True))
    if not objs:
        sys.exit(f"sass: no variant_*.cu.o under {build}/kernels (build with CUDA first)")
    print(f"{'variant':10s} {'kernel':24s} {'instr':>8s} {'KB':>8s}")
    for obj in objs:
        v = os.path.basename(obj)[len("variant_"):-len(".cu.o")]
        rows = [(readable(k), len(ins)) for k, ins in kernels(obj).items() if K128_V128.search(k)]
        for name, n in sorted(rows):
            print(f"{v:10s} {name:24s} {n:8d} {n * 16 / 1024:8.1f}")


def phases(obj, kernel, top):
    match = {k: ins for k, ins in kernels(obj).items() if kernel in k}
    if len(match) != 1:
        sys.exit(f"sass: {len(match)} kernels match {kernel!r}: {sorted(match)[:5]}")
    (name, ops), = match.items()
    marks = [i for i, x in enumerate(ops) if "SR_CLOCKLO" in x]
    bounds = [0] + marks[1:] + [len(ops)]  # the first read is phase_start
    print(f"{name}: {len(ops)} instructions, {len(marks)} clock reads")
    for k, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        mix = collections.Counter(x.split()[0].split(".")[0] for x in ops[lo:hi])
        print(f"phase {k}: {hi - lo:5d}  " + " ".join(f"{op} {n}" for op, n in mix.most_common(top)))


REGISTER = re.compile(r"\b(U?R|U?P)[0-9]+\b")


def same(old_obj, new_obj, renames=()):
    old, new = kernels(old_obj), kernels(new_obj)
    for rule in renames:
        pattern, _, repl = rule.partition("=")
        new = {re.sub(pattern, repl, name): ops for name, ops in new.items()}
    counts = collections.Counter()
    for name in sorted(set(old) | set(new)):
        if name not in old or name not in new:
            verdict = "only in " + ("new" if name in new else "old")
        elif old[name] == new[name]:
            verdict = "identical"
        elif [REGISTER.sub(r"\1", x) for x in old[name]] == [REGISTER.sub(r"\1", x) for x in new[name]]:
            verdict = "registers renamed"
        else:
            verdict = f"differs ({len(old[name])} -> {len(new[name])} instructions)"
        counts[verdict.split(" (")[0]] += 1
        if verdict != "identical":
            print(f"{verdict:40s} {name}")
    print(", ".join(f"{n} {v}" for v, n in counts.most_common()))
    return counts["identical"] == sum(counts.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sizes")
    s.add_argument("build", nargs="?", default="build-gpu")
    p = sub.add_parser("phases")
    p.add_argument("object")
    p.add_argument("kernel", help="a substring of the kernel's mangled name")
    p.add_argument("--top", type=int, default=14)
    c = sub.add_parser("same")
    c.add_argument("old")
    c.add_argument("new")
    c.add_argument("--rename", action="append", default=[], metavar="PATTERN=REPL")
    a = ap.parse_args()
    if a.cmd == "sizes":
        sizes(a.build)
    elif a.cmd == "same":
        sys.exit(0 if same(a.old, a.new, a.rename) else 1)
    else:
        phases(a.object, a.kernel, a.top)


if __name__ == "__main__":
    main()
