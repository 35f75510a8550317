#!/usr/bin/env bash
# On the GPU machine: where one kernel's warps stall, source line by source line (Nsight Compute's
# warp-state sampling, built with -lineinfo). One launch of the first kernel matching KERNEL at one
# shape; prints the LINES source lines with the most samples (their share of the kernel's, the
# largest stall reasons where ncu reports them per line) and writes the raw source page to
# OUT/source_<name>.csv.gz.
#
#   KERNEL=wy_prep OP=kda SHAPE=0 DIRECTION=fwd LINES=40 OUT=out BUILD=build-gpu scripts/profile-source.sh
#
# KERNEL matches the function's name (wy_prep_kernel, grad_chunk_kernel, state_fwd_kernel, ...;
# ReWY or baseline is the bench's --backward, rewy here). By source line: scripts/sass_lines.py
# with the same build's object of the variant (here or on this machine).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${BUILD:-build-gpu}
out=${OUT:-out}
kernel=${KERNEL:?KERNEL=regex of the kernel name}
op=${OP:-kda}
shape=${SHAPE:-0}
direction=${DIRECTION:-fwd}
lines=${LINES:-40}
name=${NAME:-${kernel//[^A-Za-z0-9_]/_}_${op}_s$shape}
mkdir -p "$out"
command -v ncu >/dev/null 2>&1 || { echo "profile-source: ncu not found" >&2; exit 1; }
[ -x "$build/bench/bench_delta" ] || { echo "profile-source: build $build/bench/bench_delta first" >&2; exit 1; }
rep="$out/.source_$name"
ncu --clock-control none --kernel-name regex:"$kernel" --launch-skip 2 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --import-source yes -f -o "$rep" \
  "$build/bench/bench_delta" --ops "$op" --shapes "$shape" --policies recompute --gates bench \
  --backward rewy --samples 2 --benchmark_filter="/$direction/" >"$out/source_$name.log" 2>&1 ||
  { echo "profile-source: ncu failed:"; tail -5 "$out/source_$name.log"; exit 1; }
[ -f "$rep.ncu-rep" ] || { echo "profile-source: no launch matched $kernel:"; grep -A12 "No kernels were profiled" "$out/source_$name.log"; exit 1; }
csv="$out/source_$name.csv"
ncu -i "$rep.ncu-rep" --page source --csv --print-source sass >"$csv" 2>>"$out/source_$name.log"
rm -f "$rep.ncu-rep"
python3 - "$csv" "$lines" <<'PY'
import csv, sys
path, top = sys.argv[1], int(sys.argv[2])
text = open(path, errors="replace").read().splitlines()
# The table starts at its header row (ncu may print notes first); files are separated by
# header rows of their own.
rows, header, current_file = [], None, ""
for r in csv.reader(text):
    if not r:
        continue
    if any("Sampling" in c for c in r) and any(c.strip().lstrip("#").strip() in ("Line", "Address", "Source") for c in r):
        header = [c.strip().lstrip("#").strip() for c in r]
        continue
    if header is None:
        if len(r) == 1 and r[0].startswith("File"):
            current_file = r[0]
        continue
    if len(r) != len(header):
        if len(r) == 1:
            current_file = r[0]
        continue
    d = dict(zip(header, r))
    d["_file"] = current_file
    rows.append(d)
if not rows:
    print("profile-source: no rows parsed; header line:", next((l for l in text if "Sampling" in l), "none")[:400])
    sys.exit(0)
all_col = next(c for c in header if "Sampling" in c and "All" in c) if any("Sampling" in c and "All" in c for c in header) \
    else next(c for c in header if "Sampling" in c)
def num(x):
    try:
        return float(str(x).replace(",", ""))
    except ValueError:
        return 0.0
total = sum(num(d[all_col]) for d in rows) or 1.0
print(f"columns: {header}")
print(f"{len(rows)} rows, {total:.0f} samples ({all_col})")
by_op = {}
for d in rows:
    op = (d.get("Source") or "").strip().split(" ")
    op = next((t for t in op if t and not t.startswith("@")), "?").rstrip(";")
    by_op[op] = by_op.get(op, 0) + num(d[all_col])
print("by opcode: " + ", ".join(f"{o} {100 * v / total:.1f}%" for o, v in sorted(by_op.items(), key=lambda x: -x[1])[:16]))
stall_cols = [c for c in header if c.startswith("stall_") or ("Stall" in c and c != all_col and "Sampling" not in c)]
for d in sorted(rows, key=lambda d: -num(d[all_col]))[:top]:
    where = d.get("Line") or d.get("Address") or ""
    src = (d.get("Source") or "").strip()[:110]
    stalls = sorted(((num(d[c]), c) for c in stall_cols), reverse=True)[:3]
    st = ", ".join(f"{c}={v:.0f}" for v, c in stalls if v > 0)
    print(f"{100 * num(d[all_col]) / total:5.1f}%  {where:>6}  {src}" + (f"   [{st}]" if st else ""))
PY
gzip -f "$csv"
