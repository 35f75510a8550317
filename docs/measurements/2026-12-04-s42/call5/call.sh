#!/usr/bin/env bash
# Device call 5 of the forty-second session: keeptb as the default (host-side switch; call 4
# measured and tabled it under REWY_EXPERIMENTS): every GPU test, then memcheck and racecheck on
# DeltaNet's and GDN's small runs (the path the switch changes). No timing.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
rewy_device_build "$out/build.log" 240 gpu_test_delta
echo "build exit $? at $((SECONDS - t0)) s"
t=build-gpu/tests/gpu_test_delta
timeout 120 $t >"$out/tests.log" 2>&1
echo "tests exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$out/tests.log" | tr '\n' ' ')"
grep -E "Failure|above 2x" "$out/tests.log" | head -8
for tool in memcheck racecheck; do
  REWY_GPU_TEST_SMALL=1 timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 $t \
    --gtest_filter='GpuDelta.DeltaNet:GpuDelta.GDN' >"$out/san_$tool.log" 2>&1
  echo "$tool exit $? at $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1)"
done
gzip -f "$out"/san_*.log
echo "call done at $((SECONDS - t0)) s"
