#!/usr/bin/env bash
# On the GPU machine: Nsight Compute on rewy's delta-rule kernels at one shape, one kernel launch
# each (forward and ReWY backward, recompute policy), with the sections that say what limits a
# kernel: speed of light (SM / memory throughput), occupancy, launch statistics (registers,
# shared memory), warp stall reasons. Needs ncu with hardware counters (Firecracker machines; the
# clocks are left alone: --clock-control none).
#
#   scripts/profile-kernels.sh                 OPS=gdn,kda SHAPE=0 OUT=out BUILD=build-gpu
# Writes OUT/ncu_<op>.txt and prints a one-line-per-kernel summary last.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${BUILD:-build-gpu}
out=${OUT:-out}
ops=${OPS:-deltanet,gdn,kda,gdn2}
shape=${SHAPE:-0}
mkdir -p "$out"
command -v ncu >/dev/null 2>&1 || { echo "profile-kernels: ncu not found" >&2; exit 1; }
[ -x "$build/bench/bench_delta" ] || { echo "profile-kernels: build $build/bench/bench_delta first" >&2; exit 1; }
status=0
for op in ${ops//,/ }; do
  # Two samples of each direction; the kernel filter keeps rewy's own kernels (not the L2 flush).
  ncu --clock-control none --kernel-name regex:'wy_prep|state_|grad_chunk' --launch-count 12 --csv --page details \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    "$build/bench/bench_delta" --ops "$op" --shapes "$shape" --policies recompute --gates bench \
    --backward rewy --samples 2 >"$out/ncu_$op.csv" 2>"$out/ncu_$op.log" || { status=1; tail -5 "$out/ncu_$op.log"; }
done
echo
echo "== per kernel launch: duration, SM and memory throughput (% of peak), achieved occupancy, registers, smem =="
python3 - "$out" ${ops//,/ } <<'PY'
import csv, io, sys
out, ops = sys.argv[1], sys.argv[2:]
want = {"Duration": "dur", "Compute (SM) Throughput": "sm", "Memory Throughput": "mem",
        "Achieved Occupancy": "occ", "Registers Per Thread": "regs", "Dynamic Shared Memory Per Block": "smem"}
for op in ops:
    try:
        text = open(f"{out}/ncu_{op}.csv").read()
    except OSError:
        continue
    start = text.find('"ID"')
    if start < 0:
        print(op, "no ncu rows (see", f"{out}/ncu_{op}.log)"); continue
    rows = {}
    for r in csv.DictReader(io.StringIO(text[start:])):
        k = rows.setdefault(r["ID"], {"name": r["Kernel Name"].split("(")[0].replace("rewy::delta::cuda_impl::", "")})
        if r["Metric Name"] in want:
            k[want[r["Metric Name"]]] = f'{r["Metric Value"]} {r["Metric Unit"]}'.strip()
    for i, k in sorted(rows.items(), key=lambda x: int(x[0])):
        print(f'{op:9s} {k["name"][:58]:58s} ' + "  ".join(f'{f} {k.get(f, "-")}' for f in ("dur", "sm", "mem", "occ", "regs", "smem")))
PY
exit $status
