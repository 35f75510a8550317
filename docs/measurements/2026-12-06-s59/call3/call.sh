#!/usr/bin/env bash
# Device call 3 of the fifty-ninth session (carry .prebuilt .fla .triton-pack; the pack of commit
# a976796's sources, stamp 0c9d5b3aeb6cd345): call 2's one failure under prep4 replayed with the
# defaults (GpuDelta.DeltaNet, seed 4640586137157306581: dbeta at T = 1 in the Save rows, which run
# no prep4 kernel), prep4's tests on a fresh seed, DeltaNet's and GDN's Recompute ops against the
# defaults at the six shapes (two rounds), then memcheck and racecheck on the small case while
# time is left. UNTIL_S (default 320) bounds it.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS; until_s=${UNTIL_S:-320}
left() { echo $((until_s - (SECONDS - t0))); }
rewy_device_build "$out/build.log" 30 gpu_test_delta bench_delta >/dev/null
echo "build exit $? at $((SECONDS - t0)) s"
t=build-gpu/tests/gpu_test_delta b=build-gpu/bench/bench_delta
for e in "" prep4; do
  REWY_EXPERIMENTS=$e REWY_TEST_SEED=4640586137157306581 timeout 40 $t --gtest_filter=GpuDelta.DeltaNet >"$out/seed_${e:-default}.log" 2>&1
  echo "== seed replay, ${e:-default}: exit $?"; grep -E "T=    1 " "$out/seed_${e:-default}.log" | cut -c1-120
done
REWY_EXPERIMENTS=prep4 timeout 90 $t --gtest_filter="$(rewy_gpu_test_filter deltanet,gdn)" >"$out/tests_prep4.log" 2>&1
echo "== prep4 tests exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  (PASSED|FAILED)' "$out/tests_prep4.log" | tr '\n' ' ')"
grep -E "Failure|above" "$out/tests_prep4.log" | head -6
for r in 1 2; do
  for e in default prep4; do
    [ "$(left)" -gt 40 ] || break
    OPS_VARIANTS=deltanet,gdn OPS_SHAPES=0,1,2,3,4,5 OPS_BACKWARD=rewy rewy_ops_csv $b "$out/ops_${e}_$r.csv" \
      REWY_EXPERIMENTS=$([ $e = default ] || echo $e)
    echo "ops $e round $r exit $? at $((SECONDS - t0)) s"
  done
  [ -f "$out/ops_prep4_$r.csv" ] && python3 bench/compare_ours.py "$out/ops_default_$r.csv" "$out/ops_prep4_$r.csv"
done
for tool in memcheck racecheck; do
  l=$(left); [ "$l" -gt 50 ] || { echo "$tool skipped"; continue; }
  REWY_EXPERIMENTS=prep4 REWY_GPU_TEST_SMALL=1 timeout $((l - 10)) compute-sanitizer --tool $tool --error-exitcode 1 $t \
    --gtest_filter="$(rewy_gpu_test_filter deltanet,gdn)" >"$out/san_$tool.log" 2>&1
  echo "$tool exit $? at $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1)"
done
(cd "$out" && tar -czf all.tar.gz --remove-files build.log seed_*.log tests_prep4.log ops_*.csv san_*.log 2>/dev/null)
echo "call done at $((SECONDS - t0)) s"
