#!/usr/bin/env bash
# Device call 4 of the fifty-ninth session (carry .prebuilt .fla .triton-pack): the four-CTA
# wy_prep as the default at K = 128, and GpuDelta's T = 1 cases at 64 heads: every GPU test, then
# DeltaNet's and GDN's Recompute FLA table (FLA in the same call) while time is left. UNTIL_S
# (default 200) bounds it.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS; until_s=${UNTIL_S:-200}
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 30 gpu_test_delta bench_delta delta_accuracy rewy >/dev/null
echo "build exit $? at $((SECONDS - t0)) s"
timeout 110 build-gpu/tests/gpu_test_delta >"$out/tests.log" 2>&1
echo "== tests exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  (PASSED|FAILED)' "$out/tests.log" | tr '\n' ' ')"
grep -E "Failure|above" "$out/tests.log" | head -6
left=$((until_s - (SECONDS - t0)))
if [ $left -gt 50 ]; then
  mkdir -p "$out/t"
  OPS=deltanet,gdn POLICIES=recompute GATES=bench rewy_fla_table "$out/t" $left
  echo "table exit $? at $((SECONDS - t0)) s"
fi
(cd "$out" && tar -czf all.tar.gz --remove-files build.log tests.log t 2>/dev/null)
echo "call done at $((SECONDS - t0)) s"
