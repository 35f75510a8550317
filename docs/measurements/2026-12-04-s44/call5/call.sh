#!/usr/bin/env bash
# Device call 5 of the forty-fourth session (the session's last device time, about 350 s): the
# gated variants' grad_chunk reads its state sum's tiles (H, ∂H⁺) with 16-byte shared loads
# (load8_shared; load8's uint4 had been split into four 4-byte loads, 4-way bank conflicts: call 4).
# GDN's, KDA's and GDN2's GPU tests and the gate cases; memcheck and racecheck on GDN's small case
# if time allows; grad_chunk's phases at shape 0 (against call 1's) and whole ops at shapes 0 and 4
# (against call 4's table, bench/compare_ours.py).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 230 gpu_test_delta bench_delta
echo "build exit $? at $((SECONDS - t0)) s"
t=build-gpu/tests/gpu_test_delta b=build-gpu/bench/bench_delta
timeout 60 $t --gtest_filter="$(rewy_gpu_test_filter gdn,kda,gdn2 cases)" >"$out/tests.log" 2>&1
echo "tests exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  FAILED|SKIPPED \]' "$out/tests.log" | tr '\n' ' ')"
grep -E "Failure|above 2x" "$out/tests.log" | head -8
REWY_KERNEL_TIMING=2 timeout 40 $b --ops gdn,kda,gdn2 --shapes 0 --policies recompute --gates bench --backward rewy \
  --samples 3 >"$out/phases.txt" 2>&1
grep -E "grad_chunk.*(cycles|us/call)" "$out/phases.txt" | cut -c1-200
timeout 60 $b --ops gdn,kda,gdn2 --shapes 0,4 --policies recompute --gates bench --backward rewy --samples 20 \
  --csv "$out/ops.csv" >/dev/null 2>&1
echo "ops exit $? at $((SECONDS - t0)) s"
python3 bench/compare_ours.py docs/measurements/2026-12-04-s44/call4/table/ours.csv "$out/ops.csv" 2>&1 | tail -8
grep -E ",bwd,rewy," "$out/ops.csv" | cut -d, -f1-4,8,10
for tool in memcheck racecheck; do
  [ $((SECONDS - t0)) -lt 250 ] || { echo "no $tool (time)"; continue; }
  REWY_GPU_TEST_SMALL=1 timeout 45 compute-sanitizer --tool $tool --error-exitcode 1 $t --gtest_filter=GpuDelta.GDN \
    >"$out/san_$tool.log" 2>&1
  echo "$tool exit $? at $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1)"
done
cd "$out" && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz .
echo "call done at $((SECONDS - t0)) s"
