#!/usr/bin/env bash
# Device call 3 of the sixty-sixth session (carry .prebuilt): every GPU test on the session's last
# tree (GDN's one-kernel forward off by default, experiments ffwdp and ffwdpg; the one kernel's
# code as call 1 ran it), the call ending if they hang.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 250 gpu_test_delta || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
grep -E "prebuilt" "$out/build.log" | head -3
timeout 150 build-gpu/tests/gpu_test_delta >"$out/tests_default.log" 2>&1
echo "== every GPU test exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$out/tests_default.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which|no forward" "$out/tests_default.log" | head -8
grep -E "T=  256 .*recompute" "$out/tests_default.log" | cut -c1-110
gzip -9 "$out/tests_default.log"
echo "call done at $((SECONDS - t0)) s"
