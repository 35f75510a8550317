#!/usr/bin/env bash
# Device call 2 of the sixty-fifth session (carry .prebuilt .fla .triton-pack; docs/measurements
# moved aside but for this session's folder): the new defaults (DeltaNet's Recompute forward at
# K = V = 128 as wy_prep's 𝒯-only kernel and the one kernel where more than 64 V-slices of 64 run).
# Every GPU test (the call ends if they hang), then the four-op FLA table, FLA in the same call.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
grep -E "prebuilt" "$out/build.log" | head -3
timeout 150 build-gpu/tests/gpu_test_delta >"$out/tests_default.log" 2>&1
rc=$?
echo "== every GPU test exit $rc at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$out/tests_default.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which|no forward" "$out/tests_default.log" | head -8
grep -E "^deltanet T=  256 .*recompute" "$out/tests_default.log" | cut -c1-200 | head -4
[ $rc -eq 124 ] && { echo "hung: $(grep -E '^\[ RUN' "$out/tests_default.log" | tail -1)"; (cd "$out" && tar -czf /tmp/c2.tar.gz . && find . -mindepth 1 -delete && mv /tmp/c2.tar.gz all.tar.gz); exit 1; }
mkdir -p /tmp/c2keep && cp "$out"/tests_default.log "$out"/build.log /tmp/c2keep/
SETS=none VARIANTS=deltanet,gdn,kda,gdn2 OPS_SHAPES=3 OPS_BACKWARD=rewy LIMIT_S=${LIMIT_S:-380} \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd2 && tar -xzf "$out/all.tar.gz" -C /tmp/dd2 && cp /tmp/c2keep/* /tmp/dd2/ && (cd /tmp/dd2 && tar -czf "$out/all.tar.gz" .)
grep -E "^==|geomean|min |table|done|prebuilt" /tmp/dd2/decide.log | head -30
[ -f /tmp/dd2/table/side_by_side.txt ] && grep -E "^==|geomean|min " /tmp/dd2/table/side_by_side.txt | head -60
echo "call done at $((SECONDS - t0)) s"
