#!/usr/bin/env bash
# Device call 4 of the thirty-eighth session (the last 317 s of its device time): experiment
# `stackh` (KDA's ReWY grad_chunk at K = V = 128 with phase 1's ∂Q̂ = s ∂O Hᵀ and phase 2's
# R_W = −R_U Hᵀ in one k-loop; chunk_bwd.cuh's kStackH) on a lean build: KDA's GPU tests and the
# channel-gate cases with it, then KDA's Recompute ReWY ops at shapes 0 and 3, defaults then
# stackh (no sanitizers, no FLA table).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
rewy_device_build "$out/build.log" 200 gpu_test_delta bench_delta || { echo "build failed or timed out at $((SECONDS - t0)) s"; tail -3 "$out/build.log"; exit 1; }
echo "built at $((SECONDS - t0)) s"
REWY_EXPERIMENTS=stackh:kda timeout 40 build-gpu/tests/gpu_test_delta \
  --gtest_filter="$(rewy_gpu_test_filter kda cases)" >"$out/tests_stackh.log" 2>&1
echo "stackh tests exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$out/tests_stackh.log" | tr '\n' ' ')"
OPS_VARIANTS=kda OPS_SHAPES=0,3 OPS_BACKWARD=rewy rewy_ops_csv build-gpu/bench/bench_delta "$out/ops_default.csv"
echo "default ops at $((SECONDS - t0)) s"
OPS_VARIANTS=kda OPS_SHAPES=0,3 OPS_BACKWARD=rewy rewy_ops_csv build-gpu/bench/bench_delta "$out/ops_stackh.csv" REWY_EXPERIMENTS=stackh:kda
echo "stackh ops at $((SECONDS - t0)) s"
python3 bench/compare_ours.py "$out/ops_default.csv" "$out/ops_stackh.csv"
echo "call done at $((SECONDS - t0)) s"
