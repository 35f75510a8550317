#!/usr/bin/env bash
# Device call of the fifty-eighth session (carry .prebuilt .fla .triton-pack): DeltaNet's ∂K̄ state
# term from state_bwd as the default where the replay and state_bwd do not run side by side
# (Config::dk_state_term Auto). GpuDelta.DkStateBackward (its 128-pair case takes the default
# path: the counter), then the Recompute ReWY backward at shapes 0, 1 and 4 with the default and
# with REWY_EXPERIMENTS=nodkstate, twice each, alternating. CALL_TESTS_S trims the test's time.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 280 gpu_test_delta bench_delta; echo "build exit $? at $((SECONDS - t0)) s"
head -1 "$out/build.log"
timeout "${CALL_TESTS_S:-90}" build-gpu/tests/gpu_test_delta --gtest_filter=GpuDelta.DkStateBackward >"$out/tests.log" 2>&1
echo "tests exit $? at $((SECONDS - t0)) s"; grep -E "^DeltaNet|PASSED|FAILED|Failure" "$out/tests.log" | head -30
b=build-gpu/bench/bench_delta
for round in 1 2; do
  for e in nodkstate default; do
    OPS_VARIANTS=deltanet OPS_SHAPES=0,1,4 OPS_BACKWARD=rewy rewy_ops_csv $b "$out/ops_${e}_$round.csv" \
      REWY_EXPERIMENTS=$([ $e = default ] || echo $e)
  done
  python3 bench/compare_ours.py "$out/ops_nodkstate_$round.csv" "$out/ops_default_$round.csv"
done
echo "call done at $((SECONDS - t0)) s"
