#!/usr/bin/env bash
# Device call 3 of the fifty-third session (carry .prebuilt where packed): the lean form of call 2 for the device time
# left (about 480 s, of which a fresh machine's start takes about 150): build gpu_test_delta alone,
# every delta GPU test on the new defaults (GDN's decay cut on both passes), then memcheck and
# racecheck on GDN's tests at the small case while time is left (LIMIT_S, default 300).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS; limit=${LIMIT_S:-300}
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" $((limit - 60)) gpu_test_delta
echo "build exit $? at $((SECONDS - t0)) s"; tail -2 "$out/build.log"
timeout $((limit - 10 - (SECONDS - t0))) build-gpu/tests/gpu_test_delta >"$out/tests_default.log" 2>&1
echo "tests exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|SKIPPED \]' "$out/tests_default.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which" "$out/tests_default.log" | head -20
filter=$(rewy_gpu_test_filter gdn)
for tool in memcheck racecheck; do
  left=$((limit - 8 - (SECONDS - t0)))
  [ $left -gt 15 ] || { echo "$tool: skipped ($left s left)"; continue; }
  REWY_GPU_TEST_SMALL=1 timeout $left compute-sanitizer --tool $tool --error-exitcode 1 \
    build-gpu/tests/gpu_test_delta --gtest_filter="$filter" >"$out/san_gdn_$tool.log" 2>&1
  echo "$tool exit $? at $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$out/san_gdn_$tool.log" | tr '\n' ' ')"
done
(cd "$out" && tar -czf /tmp/c3.tar.gz . && find . -mindepth 1 -delete && mv /tmp/c3.tar.gz all.tar.gz)
echo "call done at $((SECONDS - t0)) s"
