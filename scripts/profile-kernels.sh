#!/usr/bin/env bash
# On the GPU machine: Nsight Compute on rewy's delta-rule kernels at one shape, one kernel launch
# each (forward and ReWY backward, recompute policy), with the sections that say what limits a
# kernel: speed of light (SM / memory throughput), occupancy, launch statistics (registers,
# shared memory), warp stall reasons. Needs ncu with hardware counters (Firecracker machines; the
# clocks are left alone: --clock-control none).
#
#   scripts/profile-kernels.sh                 OPS=gdn,kda SHAPE=0 POLICIES=recompute OUT=out BUILD=build-gpu
#   KERNELS=regex LAUNCHES=12 FILTER=bwd       which kernels, how many launches, which benchmarks
#                                              (Google Benchmark's filter; bwd: backward only)
# Writes OUT/ncu_<op>_<shape>.csv and prints a one-line-per-kernel summary last, with the three
# largest stall reasons (warps stalled per issued instruction).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${BUILD:-build-gpu}
out=${OUT:-out}
ops=${OPS:-deltanet,gdn,kda,gdn2}
shape=${SHAPE:-0}
policies=${POLICIES:-recompute}
kernels=${KERNELS:-wy_prep|wy_replay|state_|grad_chunk}
launches=${LAUNCHES:-12}
filter=${FILTER:-.}
mkdir -p "$out"
command -v ncu >/dev/null 2>&1 || { echo "profile-kernels: ncu not found" >&2; exit 1; }
[ -x "$build/bench/bench_delta" ] || { echo "profile-kernels: build $build/bench/bench_delta first" >&2; exit 1; }
status=0
for op in ${ops//,/ }; do
  # Two samples of each direction; the kernel filter keeps rewy's own kernels (not the L2 flush).
  ncu --clock-control none --kernel-name regex:"$kernels" --launch-count "$launches" --csv --page details \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --metrics regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    "$build/bench/bench_delta" --ops "$op" --shapes "$shape" --policies "$policies" --gates bench \
    --backward rewy --samples 2 --benchmark_filter="$filter" >"$out/ncu_${op}_$shape.csv" 2>"$out/ncu_${op}_$shape.log" || { status=1; tail -5 "$out/ncu_${op}_$shape.log"; }
done
echo
echo "== per kernel launch: duration, SM and memory throughput (% of peak), achieved occupancy, registers, smem =="
python3 - "$out" "$shape" ${ops//,/ } <<'PY'
import csv, io, sys
out, shape, ops = sys.argv[1], sys.argv[2], sys.argv[3:]
want = {"Duration": "dur", "Compute (SM) Throughput": "sm", "Memory Throughput": "mem", "DRAM Throughput": "dram",
        "L2 Cache Throughput": "l2", "L1/TEX Cache Throughput": "l1", "Achieved Occupancy": "occ",
        "Registers Per Thread": "regs", "Dynamic Shared Memory Per Block": "smem"}
for op in ops:
    try:
        text = open(f"{out}/ncu_{op}_{shape}.csv").read()
    except OSError:
        continue
    start = text.find('"ID"')
    if start < 0:
        print(op, "no ncu rows (see", f"{out}/ncu_{op}_{shape}.log)"); continue
    rows = {}
    stall = "smsp__average_warps_issue_stalled_"
    for r in csv.DictReader(io.StringIO(text[start:])):
        k = rows.setdefault(r["ID"], {"name": r["Kernel Name"].split("(")[0].replace("rewy::delta::cuda_impl::", ""),
                                      "stalls": {}})
        if r["Metric Name"] in want:
            k[want[r["Metric Name"]]] = f'{r["Metric Value"]} {r["Metric Unit"]}'.strip()
        elif r["Metric Name"].startswith(stall):
            try:
                k["stalls"][r["Metric Name"][len(stall):].replace("_per_issue_active.ratio", "")] = float(r["Metric Value"].replace(",", ""))
            except ValueError:
                pass
    for i, k in sorted(rows.items(), key=lambda x: int(x[0])):
        top = sorted(k["stalls"].items(), key=lambda x: -x[1])[:3]
        print(f'{op:9s} {k["name"][:58]:58s} ' + "  ".join(f'{f} {k.get(f, "-")}' for f in ("dur", "sm", "mem", "dram", "l2", "l1", "occ", "regs", "smem"))
              + "  stalls " + ", ".join(f"{n} {v:.2f}" for n, v in top))
PY
exit $status
