#!/usr/bin/env bash
# Device call 4 of the thirty-fourth session: DeltaNet's Save forward with wy_prep beside its pass
# where the pass's slices are 64 or wider (experiment fwdsave) against the serial Save forward:
# DeltaNet's GPU tests and the beside tests with it on, then whole ops at shapes 1, 2, 3, 5 (both
# policies, forward), twice each in A, B, A, B order.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build0.log" 300 gpu_test_delta bench_delta || { tail -5 "$out/build0.log"; exit 1; }
echo "built at $((SECONDS - t0)) s"
REWY_EXPERIMENTS=fwdsave timeout 90 build-gpu/tests/gpu_test_delta \
  --gtest_filter='GpuDelta.DeltaNet:GpuDelta.PrepBeside*:GpuDelta.StalledPrep*:GpuDelta.BesideForward*' >"$out/tests_fwdsave.log" 2>&1
echo "tests (fwdsave) exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|Failure' "$out/tests_fwdsave.log" | head -5 | tr '\n' ' ')"
export OPS_VARIANTS=deltanet OPS_SHAPES=1,2,3,5 OPS_POLICIES=recompute,save OPS_BACKWARD=rewy
for round in 1 2; do
  rewy_ops_csv build-gpu/bench/bench_delta "$out/ops_default_$round.csv" REWY_EXPERIMENTS=
  rewy_ops_csv build-gpu/bench/bench_delta "$out/ops_fwdsave_$round.csv" REWY_EXPERIMENTS=fwdsave
  echo "round $round at $((SECONDS - t0)) s"
  python3 bench/compare_ours.py "$out/ops_default_$round.csv" "$out/ops_fwdsave_$round.csv" | grep fwd
done
echo "done at $((SECONDS - t0)) s"
