#!/usr/bin/env bash
# Device call 5 of the sixty-fourth session (carry .prebuilt): the session's last tree. Every GPU
# test on the defaults (the launchers now pass the register pass's tensor maps through
# launch_sequential), then DeltaNet's tests under ffwd with the test's expectations mended (the
# register pass is not expected where the one kernel runs), and memcheck and racecheck on its small
# case. Then DeltaNet's ops at the six shapes on the defaults: the register pass's step is now a
# function that the one kernel shares (same instruction count, registers and schedule moved), to
# read against call 4's default rounds (another machine).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
pack() { (cd "$out" && gzip -9 -f san_*.log 2>/dev/null; tar -czf /tmp/c5.tar.gz . && find . -mindepth 1 -delete && mv /tmp/c5.tar.gz all.tar.gz); }
trap pack EXIT
rewy_device_build "$out/build.log" 200 gpu_test_delta bench_delta || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
grep -E "prebuilt" "$out/build.log" | head -3
timeout 110 build-gpu/tests/gpu_test_delta >"$out/tests_default.log" 2>&1
echo "== every GPU test exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$out/tests_default.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which" "$out/tests_default.log" | head -8
REWY_EXPERIMENTS=ffwd timeout 60 build-gpu/tests/gpu_test_delta --gtest_filter="$(rewy_gpu_test_filter deltanet)" >"$out/tests_ffwd.log" 2>&1
echo "== ffwd tests exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$out/tests_ffwd.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which|no forward" "$out/tests_ffwd.log" | head -8
for tool in memcheck racecheck; do
  REWY_EXPERIMENTS=ffwd REWY_GPU_TEST_SMALL=1 timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 \
    build-gpu/tests/gpu_test_delta --gtest_filter="GpuDelta.DeltaNet" >"$out/san_$tool.log" 2>&1
  echo "   $tool exit $? at $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1) $(grep -E '^\[  PASSED|FAILED  \]' "$out/san_$tool.log" | tr '\n' ' ')"
done
timeout 60 build-gpu/bench/bench_delta --ops deltanet --shapes 0,1,2,3,4,5 --policies recompute --gates bench --samples 10 \
  --backward rewy --csv "$out/ops_default.csv" >"$out/ops_default.log" 2>&1
echo "   ops exit $? at $((SECONDS - t0)) s"
grep -hE "deltanet/(fwd|bwd)" "$out/ops_default.log" | cut -c1-100
echo "call done at $((SECONDS - t0)) s"
