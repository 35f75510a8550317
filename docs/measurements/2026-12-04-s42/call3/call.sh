#!/usr/bin/env bash
# Device call 3 of the forty-second session: call 2's racecheck on the new K = V = 128 small case
# reported 78 hazards in default kernels (the log's first lines name store_tinv8<128, 128> and
# store_tile_rows<64, 128, NT>); device-decide deletes the sanitizer logs, so this call keeps each
# variant's whole racecheck log. Then experiment nowr: DeltaNet's and GDN's GPU tests with it, its
# racecheck, and the Recompute backward's ops, default against nowr, at the six shapes.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 280 gpu_test_delta bench_delta
echo "build exit $? at $((SECONDS - t0)) s"
t=build-gpu/tests/gpu_test_delta
for v in DeltaNet GDN KDA GDN2; do
  REWY_GPU_TEST_SMALL=1 timeout 200 compute-sanitizer --tool racecheck --error-exitcode 1 $t \
    --gtest_filter=GpuDelta.$v >"$out/race_$v.log" 2>&1 &
done
REWY_GPU_TEST_SMALL=1 REWY_EXPERIMENTS=nowr timeout 200 compute-sanitizer --tool racecheck --error-exitcode 1 $t \
  --gtest_filter='GpuDelta.DeltaNet:GpuDelta.GDN' >"$out/race_nowr.log" 2>&1 &
REWY_GPU_TEST_SMALL=1 REWY_EXPERIMENTS=nowr timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 $t \
  --gtest_filter='GpuDelta.DeltaNet:GpuDelta.GDN' >"$out/mem_nowr.log" 2>&1 &
REWY_EXPERIMENTS=nowr timeout 200 $t --gtest_filter='GpuDelta.DeltaNet:GpuDelta.GDN:GpuDelta.OverlappedBackwardMatchesSerial' \
  >"$out/tests_nowr.log" 2>&1
echo "nowr tests exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$out/tests_nowr.log" | tr '\n' ' ')"
grep -E "Failure|error .* above" "$out/tests_nowr.log" | head -8
wait
for f in "$out"/race_*.log "$out"/mem_nowr.log; do
  echo "$(basename "$f"): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$f" | tail -1)"
done
# Kernels and accesses of the hazards (the sanitizer names both sides of each).
for f in "$out"/race_*.log; do
  grep -E "Race reported|Write Thread|Read Thread|Current Value|at .* in " "$f" | sed -E 's/\+0x[0-9a-f]+//' | sort | uniq -c | sort -rn | head -12
done
export OPS_VARIANTS=deltanet,gdn OPS_SHAPES=0,1,2,3,4,5 OPS_POLICIES=recompute OPS_BACKWARD=rewy
rewy_ops_csv build-gpu/bench/bench_delta "$out/ops_default.csv"
rewy_ops_csv build-gpu/bench/bench_delta "$out/ops_nowr.csv" REWY_EXPERIMENTS=nowr
python3 bench/compare_ours.py "$out/ops_default.csv" "$out/ops_nowr.csv"
REWY_EXPERIMENTS=nowr REWY_KERNEL_TIMING=2 timeout 60 build-gpu/bench/bench_delta --ops deltanet,gdn --shapes 0 \
  --policies recompute --gates bench --backward rewy --samples 3 >"$out/phases_nowr.txt" 2>&1
grep -hE "(wy_replay|state_bwd).*(us/call|cycles)" "$out/phases_nowr.txt" | cut -c1-200
for f in "$out"/race_*.log "$out"/mem_nowr.log; do gzip -f "$f"; done
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
