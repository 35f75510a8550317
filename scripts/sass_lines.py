#!/usr/bin/env python3
"""Stall samples of one kernel by source line: scripts/profile-source.sh's SASS page (ncu, absolute
addresses) against the same build's cubin disassembled with line info.

  python3 scripts/sass_lines.py OBJ.o 'grad_chunk_kernelILi2ELi128ELi128ELb1ELi512E' source_X.csv.gz [TOP]

OBJ.o: the object of the variant (e.g. build-gpu/kernels/CMakeFiles/rewy_kernels.dir/delta/cuda/
variant_kda.cu.o, built from the same tree and flags: -lineinfo is on); the pattern picks one
mangled kernel name. Needs cuobjdump and nvdisasm (CUDA toolkit) on PATH. Prints the stall
reasons over the kernel, then the TOP source lines (file:line of the innermost inlined function)
with their share of the samples and their three largest reasons. The opcode match line says
whether the build is the one profiled (every opcode should match).
"""
import collections
import csv
import gzip
import os
import re
import subprocess
import sys
import tempfile


def disassemble(obj):
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["cuobjdump", "-xelf", "all", os.path.abspath(obj)], cwd=d, check=True, capture_output=True)
        cubins = [f for f in os.listdir(d) if f.endswith(".cubin")]
        if not cubins:
            sys.exit(f"sass_lines: no cubin in {obj}")
        return "".join(subprocess.run(["nvdisasm", "-g", "-c", os.path.join(d, c)], check=True, capture_output=True,
                                      text=True).stdout for c in cubins)


def functions(sass):
    """{kernel: {offset: ((file, line) or None, instruction)}}."""
    out, cur, line = {}, None, None
    for text in sass.splitlines():
        m = re.match(r"^\.text\.(\S+):", text)
        if m:
            cur, line = m.group(1), None
            out[cur] = {}
            continue
        if cur is None:
            continue
        m = re.search(r'//## File "([^"]+)", line (\d+)', text)
        if m:
            line = (os.path.basename(m.group(1)), int(m.group(2)))
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", text)
        if m:
            out[cur][int(m.group(1), 16)] = (line, m.group(2).strip())
    return out


def num(x):
    try:
        return float(str(x).replace(",", ""))
    except ValueError:
        return 0.0


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    obj, pattern, page = sys.argv[1:4]
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    funcs = functions(disassemble(obj))
    names = [f for f in funcs if re.search(pattern, f)]
    if len(names) != 1:
        sys.exit(f"sass_lines: {len(names)} kernels match {pattern!r}: {names[:8]}")
    code = funcs[names[0]]
    opener = gzip.open if page.endswith(".gz") else open
    with opener(page, "rt", errors="replace") as f:
        rows = list(csv.reader(f))
    head = next((i for i, r in enumerate(rows) if "Address" in r), None)
    if head is None:
        sys.exit(f"sass_lines: no Address column in {page} (profile-source.sh writes the SASS page)")
    header = rows[head]
    data = [dict(zip(header, r)) for r in rows[head + 1:] if len(r) == len(header)]
    base = min(int(d["Address"], 16) for d in data)
    matched = sum(1 for d in data if (off := int(d["Address"], 16) - base) in code
                  and code[off][1].lstrip("@!PT0123456789 ").split(" ")[0].split(".")[0] in d["Source"])
    print(f"{names[0]}: {len(data)} profiled instructions, {len(code)} in {obj}, opcode match {matched}/{len(data)}")
    col = "Warp Stall Sampling (All Samples)"
    total = sum(num(d[col]) for d in data) or 1.0
    reasons = [c for c in header if c.startswith("stall_") and "Not Issued" not in c]
    overall = collections.Counter()
    by_line = collections.defaultdict(lambda: [0.0, collections.Counter()])
    for d in data:
        entry = by_line[code.get(int(d["Address"], 16) - base, (None, ""))[0]]
        entry[0] += num(d[col])
        for c in reasons:
            entry[1][c] += num(d[c])
            overall[c] += num(d[c])
    print("stalls: " + ", ".join(f"{c[6:]} {100 * v / total:.1f}%" for c, v in overall.most_common(8)))
    for where, (samples, st) in sorted(by_line.items(), key=lambda x: -x[1][0])[:top]:
        at = f"{where[0]}:{where[1]}" if where else "?"
        print(f"{100 * samples / total:5.1f}%  {at:28s} " + ", ".join(f"{c[6:]} {100 * v / total:.1f}" for c, v in st.most_common(3)))


if __name__ == "__main__":
    main()
