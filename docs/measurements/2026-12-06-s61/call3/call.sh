#!/usr/bin/env bash
# Device call 3 of the sixty-first session (carry .prebuilt .fla .triton-pack): experiment rpass,
# DeltaNet's and GDN's fused forward pass with the state in registers
# (kernels/delta/cuda/state_fwd_reg.cuh; since call 2 GDN's gated form, and V's fragment by
# ldmatrix.trans). device-decide: DeltaNet's and GDN's GPU tests under rpass (GpuDelta.DeltaNet and
# GpuDelta.GDN check that it ran), memcheck and racecheck on them, the Recompute ops against the defaults at the six shapes
# (picked by the forward), the four-op FLA table with the winner; then each forward kernel alone
# at shapes 0, 2 and 4 under rpass and without it; the beside tests under rpass.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
SETS='rpass@deltanet,gdn' VARIANTS=deltanet,gdn,kda,gdn2 PICK_DIRECTION=fwd OPS_SHAPES=0,1,2,3,4,5 OPS_BACKWARD=rewy \
  LIMIT_S=${CALL_LIMIT_S:-500} bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)|cycles:|us/call" /tmp/dd/decide.log | tail -40
rewy_device_build /tmp/rebuild.log 30 gpu_test_delta >/dev/null  # (the pack's libraries on LD_LIBRARY_PATH again)
# The beside forms under rpass (not in DeltaNet's filter): the register pass beside wy_prep against
# it serial, and its stall error.
REWY_EXPERIMENTS=rpass timeout 60 build-gpu/tests/gpu_test_delta \
  --gtest_filter='GpuDelta.PrepBesideMatchesSerial:GpuDelta.StalledPrepRaisesInsteadOfHanging:GpuDelta.BesideForwardOnlyWhereGridsRunSideBySide' \
  >"$out/tests_beside_rpass.log" 2>&1
echo "== beside tests under rpass exit $?: $(grep -E '^\[  PASSED|FAILED' "$out/tests_beside_rpass.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which" "$out/tests_beside_rpass.log" | head -10
for e in "" rpass; do
  [ $((SECONDS - t0)) -lt 560 ] || break
  REWY_EXPERIMENTS=$e REWY_KERNEL_TIMING=1 timeout 30 build-gpu/bench/bench_delta --ops deltanet,gdn --shapes 0,2,4 \
    --policies recompute --gates bench --backward rewy --samples 3 --benchmark_filter=fwd >"$out/kernels_${e:-default}.txt" 2>&1
  echo "== kernels ${e:-default} (exit $?)"; grep -E "us/call" "$out/kernels_${e:-default}.txt" | cut -c1-120
done
echo "call done at $((SECONDS - t0)) s"
