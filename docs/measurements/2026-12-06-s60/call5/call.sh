#!/usr/bin/env bash
# Device call 5 of the sixtieth session (carry .prebuilt .fla .triton-pack): GDN's FHALF passes
# with the register barrier before P E's operand fence (no ptxas C7519 left in GDN's unit): every
# GPU test, GDN's kernels alone at shapes 0 and 4 and its Recompute ops at the six shapes (against
# calls 3 and 4: no other build in this call), then the four-op FLA table on the defaults while
# time is left. UNTIL_S (default 250) bounds it.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS; until_s=${UNTIL_S:-250}
left() { echo $((until_s - (SECONDS - t0))); }
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 30 gpu_test_delta bench_delta delta_accuracy rewy >/dev/null
echo "build exit $? at $((SECONDS - t0)) s: $(grep prebuilt: "$out/build.log" | head -1)"
t=build-gpu/tests/gpu_test_delta b=build-gpu/bench/bench_delta
timeout 75 $t >"$out/tests.log" 2>&1
echo "== every GPU test exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  (PASSED|FAILED)' "$out/tests.log" | tr '\n' ' ')"
grep -E "Failure|above" "$out/tests.log" | head -6
for shape in 0 4; do
  REWY_KERNEL_TIMING=1 timeout 40 $b --ops gdn --shapes $shape --policies recompute --gates bench --backward rewy \
    --samples 5 >"$out/kernels_gdn_s$shape.txt" 2>&1
  echo "== GDN kernels shape $shape"; grep -E "wy_prep|state_fwd_out" "$out/kernels_gdn_s$shape.txt" | cut -c1-110
done
OPS_VARIANTS=gdn OPS_SHAPES=0,1,2,3,4,5 OPS_BACKWARD=rewy rewy_ops_csv $b "$out/ops_gdn.csv"
echo "ops exit $? at $((SECONDS - t0)) s"; grep ",fwd," "$out/ops_gdn.csv" | cut -d, -f1-4,8,10
l=$(left)
if [ "$l" -gt 80 ]; then
  mkdir -p "$out/table"
  rewy_fla_table "$out/table" "$l"
  echo "table exit $? at $((SECONDS - t0)) s"
fi
(cd "$out" && tar -czf all.tar.gz --remove-files build.log tests.log kernels_gdn_s*.txt ops_gdn.csv table 2>/dev/null)
echo "call done at $((SECONDS - t0)) s"
