#!/usr/bin/env bash
# Prepared in the sixty-first session for the next one's first call (carry .prebuilt .fla
# .triton-pack; about 400 s): experiment rpassearly (the register pass with V's fragment and β
# read under Hᵀ Kᵀ and each step's O stored at the next step), DeltaNet and GDN. device-decide:
# their GPU tests under it (GpuDelta.DeltaNet and GDN check that the register pass ran), memcheck
# and racecheck on them (the staging tile's reuse across steps is new), the Recompute forward
# against the defaults at the six shapes, the four-op FLA table with the winner; then the beside
# tests under it and each forward kernel alone at shapes 1, 2 and 5 (slices of 64) with and without it.
# (The defaults' register pass: racecheck clean in the sixty-first session's call 3 under rpass,
# memcheck in calls 3 and 4, every GPU test in call 4.)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
SETS='rpassearly@deltanet,gdn' VARIANTS=deltanet,gdn,kda,gdn2 PICK_DIRECTION=fwd OPS_SHAPES=0,1,2,3,4,5 OPS_BACKWARD=rewy \
  LIMIT_S=${CALL_LIMIT_S:-480} bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)|cycles:|us/call" /tmp/dd/decide.log | tail -40
rewy_device_build /tmp/rebuild.log 30 gpu_test_delta >/dev/null  # (the pack's libraries on LD_LIBRARY_PATH again)
REWY_EXPERIMENTS=rpassearly timeout 60 build-gpu/tests/gpu_test_delta \
  --gtest_filter='GpuDelta.PrepBesideMatchesSerial:GpuDelta.StalledPrepRaisesInsteadOfHanging:GpuDelta.BesideForwardOnlyWhereGridsRunSideBySide' \
  >"$out/tests_beside_early.log" 2>&1
echo "== beside tests under rpassearly exit $?: $(grep -E '^\[  PASSED|FAILED' "$out/tests_beside_early.log" | tr '\n' ' ')"
for e in "" rpassearly; do
  [ $((SECONDS - t0)) -lt 560 ] || break
  REWY_EXPERIMENTS=$e REWY_KERNEL_TIMING=1 timeout 30 build-gpu/bench/bench_delta --ops deltanet,gdn --shapes 1,2,5 \
    --policies recompute --gates bench --backward rewy --samples 3 --benchmark_filter=fwd >"$out/kernels_${e:-default}.txt" 2>&1
  echo "== kernels ${e:-default} (exit $?)"; grep -E "state_fwd.*us/call" "$out/kernels_${e:-default}.txt" | cut -c1-120
done
echo "call done at $((SECONDS - t0)) s"
