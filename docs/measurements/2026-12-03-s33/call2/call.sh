#!/usr/bin/env bash
# Device call 2 of the thirty-third session (carry .fla .triton-pack): the beside forward with its
# flags acquired while each step's copies land (REWY_EXPERIMENTS=fwdbeside) against
# the serial forward (the default): its GPU tests (PrepBesideMatchesSerial,
# StalledPrepRaisesInsteadOfHanging, and the variants' tests with the experiment on), whole ops at
# shapes 2, 3, 5 (both policies), the winners per variant by the Recompute forward, and the FLA
# table with them.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build0.log" 300 gpu_test_delta bench_delta delta_accuracy rewy || { tail -5 "$out/build0.log"; exit 1; }
echo "built at $((SECONDS - t0)) s"
timeout 90 build-gpu/tests/gpu_test_delta --gtest_filter='GpuDelta.PrepBeside*:GpuDelta.StalledPrep*' >"$out/tests_beside.log" 2>&1
echo "beside tests exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|Failure' "$out/tests_beside.log" | head -5 | tr '\n' ' ')"
SETS=fwdbeside NOSAN=fwdbeside PICK_DIRECTION=fwd VARIANTS=deltanet,gdn,kda,gdn2 OPS_SHAPES=2,3,5 \
  OPS_POLICIES=recompute,save OPS_BACKWARD=rewy LIMIT_S=240 bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -40
