#!/usr/bin/env bash
# Device call 2 of the fifty-sixth session (carry .prebuilt .fla .triton-pack): what limits each
# kernel now, on one card in one call. FLA's kernels by torch.profiler at shapes 0 and 4
# (bench/fla_profile.py, after its autotuning); ours by REWY_KERNEL_TIMING (each kernel alone; phases
# at shape 0); then Nsight Compute's speed-of-light counters (time, DRAM bytes, DRAM / L2 / L1 /
# SM throughput, active warps) for every kernel of our four Recompute ops at shape 0 and of
# DeltaNet's and GDN's at (8, 4096, 32), ReWY backward. Clocks untouched (--clock-control none).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 280 gpu_test_delta bench_delta delta_accuracy rewy; echo "build exit $? at $((SECONDS - t0)) s"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
b=build-gpu/bench/bench_delta
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/bench:$PWD/.fla" TRITON_CACHE_DIR="$PWD/.triton-cache"
python3 bench/triton_cache.py unpack .triton-pack "$TRITON_CACHE_DIR" >/dev/null || echo "triton pack: not unpacked"
for shape in 0 4; do
  [ $((SECONDS - t0)) -lt 260 ] || { echo "FLA profile shape $shape skipped"; continue; }
  TRITON_CACHE_AUTOTUNING=1 timeout 150 python3 bench/fla_profile.py --ops delta,gdn,kda,gdn2 --shape $shape \
    >"$out/fla_profile_s$shape.txt" 2>&1
  echo "FLA profile shape $shape exit $? at $((SECONDS - t0)) s"; grep -E "total" "$out/fla_profile_s$shape.txt"
done
REWY_KERNEL_TIMING=2 timeout 60 $b --ops deltanet,gdn,kda,gdn2 --shapes 0 --policies recompute --gates bench \
  --backward rewy --samples 3 >"$out/ours_kernels_s0.txt" 2>&1
REWY_KERNEL_TIMING=1 timeout 60 $b --ops deltanet,gdn,kda,gdn2 --shapes 4 --policies recompute --gates bench \
  --backward rewy --samples 3 >"$out/ours_kernels_s4.txt" 2>&1
echo "ours timed at $((SECONDS - t0)) s"
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics=$metrics,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed
metrics=$metrics,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.per_cycle_active
: >"$out/ncu.csv"
for run in "deltanet 0" "gdn 0" "kda 0" "gdn2 0" "deltanet 4" "gdn 4"; do
  set -- $run
  left=$((570 - (SECONDS - t0)))
  [ $left -ge 40 ] || { echo "ncu $run skipped"; continue; }
  timeout $((left - 10)) ncu --clock-control none --kernel-name regex:"wy_|state_|grad_chunk|segment_" --metrics "$metrics" --csv \
    $b --ops $1 --shapes $2 --policies recompute --gates bench --backward rewy --samples 1 2>/dev/null |
    grep '^"' | sed "s/^/\"$1\",\"$2\",/" >>"$out/ncu.csv"
  echo "ncu $run exit ${PIPESTATUS[0]} at $((SECONDS - t0)) s: $(wc -l <"$out/ncu.csv") lines"
done
gzip -9 "$out/ncu.csv"
echo "call done at $((SECONDS - t0)) s"
