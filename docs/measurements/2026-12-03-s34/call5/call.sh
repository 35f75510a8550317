#!/usr/bin/env bash
# Device call 5 of the thirty-fourth session: every GPU test on the defaults with DeltaNet's Save
# forward beside at slices of 64 or wider (call 4's fwdsave, now the rule; the kernels are call 4's).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
rewy_device_build "$out/build0.log" 240 gpu_test_delta || { tail -5 "$out/build0.log"; exit 1; }
echo "built at $((SECONDS - t0)) s"
timeout 120 build-gpu/tests/gpu_test_delta >"$out/tests_default.log" 2>&1
echo "tests exit $? at $((SECONDS - t0)) s"
grep -E "^\[       OK|^\[  PASSED|^\[  FAILED|^\[  SKIPPED|Failure|Expected|Which" "$out/tests_default.log" | head -30
