#!/usr/bin/env python3
"""Where one kernel's warps stall, from scripts/profile-source.sh's SASS page (ncu warp-state
samples, one row per instruction at its absolute address).

  python3 scripts/sass_lines.py PAGE.csv[.gz] [TOP]                          by instruction
  python3 scripts/sass_lines.py PAGE.csv[.gz] [TOP] --obj OBJ.o --kernel RE  by source line

By instruction (what profile-source.sh prints): the stall reasons over the kernel, the samples
and executed warp instructions by opcode, the excess global sectors and shared-memory wavefronts
by instruction kind (uncoalesced accesses, bank conflicts), then the TOP instructions with their
share and three largest stall reasons. By source line: OBJ.o is the object of the
variant (e.g. build-gpu/kernels/CMakeFiles/rewy_kernels.dir/delta/cuda/variant_kda.cu.o, built
from the same tree and flags: -lineinfo is on) and RE picks the mangled kernel name
('grad_chunk_kernelILi2ELi128ELi128ELb1ELi512E'; of several matches, the one whose code matches
the page); its cubin is disassembled with line info and inline chains (cuobjdump and nvdisasm on
PATH). Prints the stall reasons over the kernel, then the TOP source lines (an instruction inlined
from a helper counts at the line of the kernel's own file that calls it) with their share and
three largest reasons, and the lines with the most excess shared wavefronts and global sectors.
The opcode match line says whether OBJ is the build that was profiled (every opcode should match).
"""
import argparse
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
        return "".join(subprocess.run(["nvdisasm", "-g", "-gi", "-c", os.path.join(d, c)], check=True, capture_output=True,
                                      text=True).stdout for c in cubins)


def functions(sass):
    """{kernel: {offset: ((file, line) or None, instruction)}}. With nvdisasm -gi an instruction's
    location is its inline chain, innermost first; the line kept is the innermost one in the file
    of the outermost (the kernel's own file: a helper's load is named by the kernel line, or the
    kernel-file lambda line, that calls it)."""
    out, cur, line, chain = {}, None, None, []
    for text in sass.splitlines():
        m = re.match(r"^\.text\.(\S+):", text)
        if m:
            cur, line, chain = m.group(1), None, []
            out[cur] = {}
            continue
        if cur is None:
            continue
        m = re.search(r'//## File "([^"]+)", line (\d+)', text)
        if m:
            chain.append((m.group(1), int(m.group(2))))
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", text)
        if m:
            if chain:
                own = chain[-1][0]
                f, n = next(c for c in chain if c[0] == own)
                line, chain = (os.path.basename(f), n), []
            out[cur][int(m.group(1), 16)] = (line, m.group(2).strip())
    return out


SAMPLES = "Warp Stall Sampling (All Samples)"


def num(x):
    try:
        return float(str(x).replace(",", ""))
    except ValueError:
        return 0.0


def read_page(path):
    """(header, rows as dicts) of ncu's SASS source page; the table starts at its header row."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", errors="replace") as f:
        rows = list(csv.reader(f))
    head = next((i for i, r in enumerate(rows) if "Address" in r and SAMPLES in r), None)
    if head is None:
        sys.exit(f"sass_lines: no Address and '{SAMPLES}' columns in {path} (profile-source.sh writes the SASS page)")
    header = rows[head]
    return header, [dict(zip(header, r)) for r in rows[head + 1:] if len(r) == len(header)]


def reasons_of(header):
    return [c for c in header if c.startswith("stall_") and "Not Issued" not in c]


def largest(counter, total):
    return ", ".join(f"{c[6:]} {100 * v / total:.1f}" for c, v in counter.most_common(3))


def print_stalls(overall, total):
    """The kernel's largest stall reasons, as shares of all its samples."""
    print("stalls: " + ", ".join(f"{c[6:]} {100 * v / total:.1f}%" for c, v in overall.most_common(8)))


def opcode(d):
    return next((t for t in d["Source"].strip().split(" ") if t and not t.startswith("@")), "?").rstrip(";")


# (what, excess column, all column) of ncu's source page: uncoalesced global accesses and shared-memory
# bank conflicts, summed by instruction kind.
EXCESS = (("global sectors", "L2 Theoretical Sectors Global Excessive", "L2 Theoretical Sectors Global"),
          ("shared wavefronts", "L1 Wavefronts Shared Excessive", "L1 Wavefronts Shared"))


def by_instruction(header, data, top):
    total = sum(num(d[SAMPLES]) for d in data) or 1.0
    print(f"{len(data)} instructions, {total:.0f} samples")
    reasons = reasons_of(header)
    print_stalls(collections.Counter({c: sum(num(d[c]) for d in data) for c in reasons}), total)
    ops = [opcode(d) for d in data]
    by_op, executed = collections.Counter(), collections.Counter()
    for op, d in zip(ops, data):
        by_op[op] += num(d[SAMPLES])
        executed[op.split(".")[0]] += num(d.get("Instructions Executed", 0))
    print("by opcode: " + ", ".join(f"{o} {100 * v / total:.1f}%" for o, v in by_op.most_common(16)))
    if sum(executed.values()):
        print("warp instructions executed: " + ", ".join(f"{o} {v / 1e6:.1f}M" for o, v in executed.most_common(12)))
    for what, excess, every in EXCESS:
        if excess not in header:
            continue
        ex, all_ = collections.Counter(), collections.Counter()
        for op, d in zip(ops, data):
            ex[op] += num(d[excess])
            all_[op] += num(d[every])
        kinds = [(o, v) for o, v in all_.most_common(6) if v]
        if kinds:
            print(f"excess {what} (excess / all): " + ", ".join(f"{o} {ex[o] / 1e6:.2f}M / {v / 1e6:.2f}M" for o, v in kinds))
    for d in sorted(data, key=lambda d: -num(d[SAMPLES]))[:top]:
        st = largest(collections.Counter({c: num(d[c]) for c in reasons if num(d[c]) > 0}), total)
        print(f"{100 * num(d[SAMPLES]) / total:5.1f}%  {d['Address']:>14}  {d['Source'].strip()[:110]}" +
              (f"   [{st}]" if st else ""))


def by_line(header, data, top, obj, pattern):
    funcs = functions(disassemble(obj))
    names = [f for f in funcs if re.search(pattern, f)]
    if not names:
        sys.exit(f"sass_lines: no kernel in {obj} matches {pattern!r}")
    base = min(int(d["Address"], 16) for d in data)

    def opcode_matches(code):
        return sum(1 for d in data if (off := int(d["Address"], 16) - base) in code
                   and code[off][1].lstrip("@!PT0123456789 ").split(" ")[0].split(".")[0] in d["Source"])
    # RE may match several instantiations: the profiled one is the one whose opcodes match the page's.
    scored = sorted(((opcode_matches(funcs[n]) - abs(len(funcs[n]) - len(data)), n) for n in names), reverse=True)
    if len(names) > 1:
        print(f"{len(names)} kernels match {pattern!r}; taking the one whose code matches the page best")
    names = [scored[0][1]]
    code = funcs[names[0]]
    matched = opcode_matches(code)
    print(f"{names[0]}: {len(data)} profiled instructions, {len(code)} in {obj}, opcode match {matched}/{len(data)}")
    total = sum(num(d[SAMPLES]) for d in data) or 1.0
    reasons = reasons_of(header)
    overall = collections.Counter()
    lines = collections.defaultdict(lambda: [0.0, collections.Counter()])
    for d in data:
        entry = lines[code.get(int(d["Address"], 16) - base, (None, ""))[0]]
        entry[0] += num(d[SAMPLES])
        for c in reasons:
            entry[1][c] += num(d[c])
            overall[c] += num(d[c])
    print_stalls(overall, total)
    for where, (samples, st) in sorted(lines.items(), key=lambda x: -x[1][0])[:top]:
        at = f"{where[0]}:{where[1]}" if where else "?"
        print(f"{100 * samples / total:5.1f}%  {at:28s} {largest(st, total)}")
    # Where the excess wavefronts and sectors come from (bank conflicts, uncoalesced accesses): the
    # instruction kind alone (by_instruction) does not say which load.
    for what, excess, every in EXCESS:
        if excess not in header:
            continue
        ex, all_ = collections.Counter(), collections.Counter()
        for d in data:
            where = code.get(int(d["Address"], 16) - base, (None, ""))[0]
            ex[where] += num(d[excess])
            all_[where] += num(d[every])
        worst = [(w, v) for w, v in ex.most_common(6) if v]
        if worst:
            print(f"excess {what} by line (excess / all): " +
                  ", ".join(f"{w[0] + ':' + str(w[1]) if w else '?'} {v / 1e6:.2f}M / {all_[w] / 1e6:.2f}M" for w, v in worst))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("page", help="profile-source.sh's source_<name>.csv[.gz]")
    ap.add_argument("top", nargs="?", type=int, default=40)
    ap.add_argument("--obj", help="the profiled build's object of the variant: samples by source line")
    ap.add_argument("--kernel", help="regex of the mangled kernel name in --obj")
    a = ap.parse_args()
    if bool(a.obj) != bool(a.kernel):
        ap.error("--obj and --kernel go together")
    header, data = read_page(a.page)
    if a.obj:
        by_line(header, data, a.top, a.obj, a.kernel)
    else:
        by_instruction(header, data, a.top)


if __name__ == "__main__":
    main()
