#!/usr/bin/env bash
# Device call 3 of the sixty-fourth session (carry .prebuilt): experiment ffwd, DeltaNet's fused
# Recompute forward at K = V = 128 as one kernel (kernels/delta/cuda/fwd_fused.cuh). DeltaNet's GPU
# tests under it, memcheck and racecheck on the small case, then DeltaNet's ops at the six shapes,
# default and ffwd alternating twice (bench/compare_ours.py: above 1 ffwd is faster), then each
# kernel's time (REWY_KERNEL_TIMING=1) and the one kernel's producer phases (=2) at shapes 0 and 4.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
grep -E "prebuilt" "$out/build.log" | head -3
filter=$(rewy_gpu_test_filter deltanet)
REWY_EXPERIMENTS=ffwd timeout 150 build-gpu/tests/gpu_test_delta --gtest_filter="$filter" >"$out/tests_ffwd.log" 2>&1
rc=$?
echo "== ffwd tests exit $rc at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$out/tests_ffwd.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which|error|no forward" "$out/tests_ffwd.log" | head -12
grep -E "^deltanet.*T= *(1|1000|4096|330) .*K=128 V=128 .*Recompute" "$out/tests_ffwd.log" | head -8
if [ $rc -eq 0 ]; then
  for tool in memcheck racecheck; do
    REWY_EXPERIMENTS=ffwd REWY_GPU_TEST_SMALL=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 1 \
      build-gpu/tests/gpu_test_delta --gtest_filter="GpuDelta.DeltaNet" >"$out/san_$tool.log" 2>&1
    echo "   $tool exit $? at $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1)"
    grep -E "Error|Race|Invalid|Address" "$out/san_$tool.log" | sort | uniq -c | sort -rn | head -6
  done
fi
b=build-gpu/bench/bench_delta
ops() {  # ops NAME [VAR=VALUE]
  env ${2:+"$2"} timeout 100 $b --ops deltanet --shapes 0,1,2,3,4,5 --policies recompute --gates bench --samples 10 \
    --backward rewy --csv "$out/ops_$1.csv" >"$out/ops_$1.log" 2>&1
  echo "   ops $1 exit $? at $((SECONDS - t0)) s"
}
ops default1; ops ffwd1 REWY_EXPERIMENTS=ffwd; ops default2; ops ffwd2 REWY_EXPERIMENTS=ffwd
for r in 1 2; do echo "== round $r (ffwd / default)"; python3 bench/compare_ours.py "$out/ops_default$r.csv" "$out/ops_ffwd$r.csv"; done
grep -hE "fwd" "$out/ops_ffwd1.log" | head -8
for sh in 0 4; do
  REWY_EXPERIMENTS=ffwd REWY_KERNEL_TIMING=2 timeout 60 $b --ops deltanet --shapes $sh --policies recompute --gates bench \
    --samples 3 --backward rewy >"$out/phases_ffwd_$sh.txt" 2>&1
  REWY_KERNEL_TIMING=1 timeout 60 $b --ops deltanet --shapes $sh --policies recompute --gates bench \
    --samples 3 --backward rewy >"$out/kernels_default_$sh.txt" 2>&1
  echo "== shape $sh: one kernel's phases, then the default's forward kernels"
  grep -hE "fwd_fused|wait data|P,A|solve|T out|load next" "$out/phases_ffwd_$sh.txt" | cut -c1-200 | head -12
  grep -hE "wy_prep|state_fwd" "$out/kernels_default_$sh.txt" | cut -c1-160 | head -6
done
(cd "$out" && gzip -9 -f san_*.log 2>/dev/null; tar -czf /tmp/c3.tar.gz . && find . -mindepth 1 -delete && mv /tmp/c3.tar.gz all.tar.gz)
echo "call done at $((SECONDS - t0)) s"
