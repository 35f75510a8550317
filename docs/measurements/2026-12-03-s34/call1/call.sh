#!/usr/bin/env bash
# Device call 1 of the thirty-fourth session (carry .fla .triton-pack): every GPU test and both
# sanitizers on b100beb's defaults (grad_chunk's wait changed in review), then the beside forward in
# its two forms against the serial forward (the default): fwdfence (one fence.acq_rel every four
# steps after relaxed flag reads) and fwdbeside (an acquire as each step's copies land). Whole ops
# at shapes 2, 3, 5, both policies, picked by the Recompute forward; no FLA table.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build0.log" 300 gpu_test_delta bench_delta delta_accuracy rewy || { tail -5 "$out/build0.log"; exit 1; }
echo "built at $((SECONDS - t0)) s"
for e in fwdfence fwdbeside; do
  REWY_EXPERIMENTS=$e timeout 90 build-gpu/tests/gpu_test_delta --gtest_filter='GpuDelta.PrepBeside*:GpuDelta.StalledPrep*' >"$out/tests_beside_$e.log" 2>&1
  echo "beside tests ($e) exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|Failure' "$out/tests_beside_$e.log" | head -5 | tr '\n' ' ')"
done
DEFAULT_TESTS=1 SETS='fwdfence fwdbeside' NOSAN='fwdfence fwdbeside' PICK_DIRECTION=fwd VARIANTS=deltanet,gdn,kda,gdn2 \
  OPS_SHAPES=2,3,5 OPS_POLICIES=recompute,save OPS_BACKWARD=rewy TABLE=0 LIMIT_S=400 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -60
