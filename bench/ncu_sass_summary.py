#!/usr/bin/env python3
"""Summary of one kernel's Nsight Compute source page (SASS), for reading where a kernel waits.

Input: the CSV of `ncu -i REPORT.ncu-rep --page source --csv --print-source sass` (one kernel).
Prints the stall reasons over all warp samples, the samples and executed instructions by opcode,
the instructions with the most excess global sectors and shared-memory wavefronts (coalescing and
bank conflicts), and the most-sampled instructions with their main stall reason.

  python3 bench/ncu_sass_summary.py grad_chunk_sass.csv [--top 25]
"""
import argparse
import collections
import csv


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="ncu --page source --csv --print-source sass output")
    ap.add_argument("--top", type=int, default=25, help="instructions listed per table")
    args = ap.parse_args()
    rows = list(csv.reader(open(args.csv)))
    if len(rows) < 3 or "Source" not in rows[1]:
        raise SystemExit(f"{args.csv}: not an ncu source-page CSV (no header row with 'Source')")
    header, data = rows[1], rows[2:]
    col = {h: i for i, h in enumerate(header)}

    def num(r, h):
        try:
            return float(r[col[h]])
        except (KeyError, ValueError, IndexError):
            return 0.0

    def opcode(r):
        words = [w for w in r[col["Source"]].split() if not w.startswith("@")]
        return words[0] if words else "?"

    samples = "Warp Stall Sampling (All Samples)"
    total = sum(num(r, samples) for r in data) or 1.0
    print(f"{rows[0][1] if len(rows[0]) > 1 else rows[0][0]}")
    print(f"warp samples {total:.0f}, SASS instructions {len(data)}")
    stalls = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    by_stall = {h: sum(num(r, h) for r in data) for h in stalls}
    print("stall reasons (share of all samples):")
    for h, v in sorted(by_stall.items(), key=lambda x: -x[1])[:10]:
        print(f"  {h:24s} {100 * v / total:5.1f}%")
    by_op, exec_op = collections.Counter(), collections.Counter()
    for r in data:
        base = opcode(r).split(".")[0]
        by_op[base] += num(r, samples)
        exec_op[base] += num(r, "Instructions Executed")
    print("samples by opcode (warp instructions executed):")
    for k, v in by_op.most_common(14):
        print(f"  {k:10s} {100 * v / total:5.1f}%  {exec_op[k] / 1e6:8.2f}M")
    for title, excess, all_ in (("global sectors", "L2 Theoretical Sectors Global Excessive", "L2 Theoretical Sectors Global"),
                                ("shared wavefronts", "L1 Wavefronts Shared Excessive", "L1 Wavefronts Shared")):
        ex, tot = collections.Counter(), collections.Counter()
        for r in data:
            ex[opcode(r)] += num(r, excess)
            tot[opcode(r)] += num(r, all_)
        print(f"excess {title} by instruction kind (excess / all):")
        for k, v in tot.most_common(8):
            if v:
                print(f"  {k:36s} {ex[k] / 1e6:7.2f}M / {v / 1e6:7.2f}M")
    print("most-sampled instructions (share, main stall, address tail, SASS):")
    for r in sorted(data, key=lambda r: -num(r, samples))[: args.top]:
        top = max(stalls, key=lambda h: num(r, h))
        print(f"  {100 * num(r, samples) / total:4.1f}% {top:20s} {r[0][-5:]} {r[col['Source']].strip()[:70]}")


if __name__ == "__main__":
    main()
