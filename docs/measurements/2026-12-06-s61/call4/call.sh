#!/usr/bin/env bash
# Device call 4 of the sixty-first session (carry .prebuilt .fla .triton-pack): the new defaults
# (the forward pass with the state in registers for DeltaNet at V-slices of 64 and 128 and GDN at
# 64). Every GPU test on them, then the four-op FLA table (FLA in the same call), then memcheck
# on DeltaNet's and GDN's small cases while the call's time lasts (CALL_LIMIT_S, default 370 s:
# the session's device time left). Racecheck on the register pass: calls 2 and 3 (under rpass).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
limit=${CALL_LIMIT_S:-370}
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta delta_accuracy rewy || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
timeout 110 build-gpu/tests/gpu_test_delta >"$out/tests_default.log" 2>&1
echo "== every GPU test exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$out/tests_default.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which" "$out/tests_default.log" | head -10
SETS=none VARIANTS=deltanet,gdn,kda,gdn2 OPS_SHAPES=3 OPS_BACKWARD=rewy LIMIT_S=$((limit - 40 - (SECONDS - t0))) \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -E "^==|geomean|min |table|done" /tmp/dd/decide.log | head -30
rewy_device_build /tmp/rebuild.log 30 gpu_test_delta >/dev/null  # (the pack's libraries on LD_LIBRARY_PATH again)
left=$((limit - 10 - (SECONDS - t0)))
if [ $left -ge 30 ]; then
  REWY_GPU_TEST_SMALL=1 timeout $left compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/gpu_test_delta \
    --gtest_filter="$(rewy_gpu_test_filter deltanet,gdn)" >"$out/memcheck.log" 2>&1
  echo "memcheck exit $? at $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)"
  grep -E "^\[ *(RUN|OK)" "$out/memcheck.log" | tail -3
  gzip -9 "$out/memcheck.log"
fi
echo "call done at $((SECONDS - t0)) s"
