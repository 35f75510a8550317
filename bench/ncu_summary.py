"""Nsight Compute's counters per kernel, one line each: a device call's `ncu --csv --metrics ...`
output, each line prefixed with "op","shape" (docs/measurements/2026-12-05-s56/call2/call.sh), to
a table of each kernel's median over its launches (the benchmark's warm-up and timed calls).

    python3 bench/ncu_summary.py ncu.csv[.gz] [--bw 3.35]

Columns: µs, DRAM bytes read and written (MB), the DRAM rate those give (TB/s) and its share of
--bw (the card's DRAM peak; H100 SXM 3.35, H200 4.8 TB/s), then ncu's own throughputs (% of each
unit's peak: DRAM, L2, L1, SM) and the active warps an SM cycle.
"""
import argparse
import collections
import csv
import gzip
import re
import statistics

# ncu scales units per value unless told otherwise: each to ns, bytes, % or warps first.
UNITS = {"ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "byte": 1, "Kbyte": 1e3,
         "Mbyte": 1e6, "Gbyte": 1e9, "%": 1, "warp": 1}
METRICS = [
    ("gpu__time_duration.sum", "us", 1e-3),  # ns -> µs
    ("dram__bytes_read.sum", "rd MB", 1e-6),
    ("dram__bytes_write.sum", "wr MB", 1e-6),
    ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM%", 1),
    ("lts__throughput.avg.pct_of_peak_sustained_elapsed", "L2%", 1),
    ("l1tex__throughput.avg.pct_of_peak_sustained_elapsed", "L1%", 1),
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM%", 1),
    ("sm__warps_active.avg.per_cycle_active", "warps", 1),
]


def short_name(kernel):
    """'void grad_chunk_kernel<0, 128, 128, 1, 512, 125>(DeltaParams)' -> 'grad_chunk<0,128,128,1,512,125>'."""
    m = re.match(r"(?:void )?(?:[\w:]+::)?(\w+?)(?:_kernel)?(<.*>)?\(", kernel)
    if not m:
        return kernel[:60]
    return m.group(1) + (m.group(2) or "").replace(" ", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--bw", type=float, default=3.35, help="the card's DRAM peak, TB/s")
    a = ap.parse_args()
    opener = gzip.open if a.csv.endswith(".gz") else open
    # (op, shape, kernel) -> metric -> [values]; launches keep their order of first appearance
    vals = collections.OrderedDict()
    with opener(a.csv, "rt") as f:
        for row in csv.reader(f):
            if len(row) < 17 or row[2] == "ID":
                continue
            op, shape, kernel, metric, unit, value = row[0], row[1], row[6], row[14], row[15], row[16]
            try:
                x = float(value.replace(",", "")) * UNITS.get(unit, float("nan"))
            except ValueError:
                continue
            vals.setdefault((op, shape, short_name(kernel)), collections.defaultdict(list))[metric].append(x)
    if not vals:
        raise SystemExit(f"ncu_summary: no metric rows in {a.csv} (expected ncu --csv lines prefixed with \"op\",\"shape\")")
    head = f"{'op':9} {'shape':5} {'kernel':46} {'n':>3} " + " ".join(f"{h:>7}" for _, h, _ in METRICS[:3])
    head += f" {'TB/s':>6} {'of bw':>6} " + " ".join(f"{h:>6}" for _, h, _ in METRICS[3:])
    print(head)
    for (op, shape, name), m in vals.items():
        med = {k: statistics.median(v) * s for k, _, s in METRICS for v in [m.get(k, [float("nan")])]}
        n = len(m.get(METRICS[0][0], []))
        us = med["gpu__time_duration.sum"]
        rate = (med["dram__bytes_read.sum"] + med["dram__bytes_write.sum"]) / us if us > 0 else float("nan")  # MB/µs = TB/s
        line = f"{op:9} {shape:5} {name[:46]:46} {n:3d} " + " ".join(f"{med[k]:7.1f}" for k, _, _ in METRICS[:3])
        line += f" {rate:6.2f} {100 * rate / a.bw:5.0f}% " + " ".join(f"{med[k]:6.1f}" for k, _, _ in METRICS[3:])
        print(line)


if __name__ == "__main__":
    main()
