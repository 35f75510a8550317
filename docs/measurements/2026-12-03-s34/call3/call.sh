#!/usr/bin/env bash
# Device call 3 of the thirty-fourth session (carry .fla .triton-pack): the defaults after call 2
# (the fenced beside forward for the Recompute forward; the library keeps it serial under
# compute-sanitizer and Nsight Compute by the variables they give their child). Every GPU test
# (BesideForwardOnlyWhereGridsRunSideBySide new) and both sanitizers, now without
# REWY_SERIAL_FORWARD=1 (a missed tool would stall the forward and fail them); then whole ops at
# shapes 2, 3, 5, both policies, against call 1's (no FLA table: the kernels are call 2's); each
# kernel's time alone at (1, 16384, 16) (REWY_KERNEL_TIMING=1 runs them one at a time) beside the
# whole ops, for the count of wy_replay beside the backward's passes (NOTES.md).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build0.log" 300 gpu_test_delta bench_delta delta_accuracy rewy || { tail -5 "$out/build0.log"; exit 1; }
echo "built at $((SECONDS - t0)) s"
DEFAULT_TESTS=1 VARIANTS=deltanet,gdn,kda,gdn2 OPS_SHAPES=2,3,5 OPS_POLICIES=recompute,save OPS_BACKWARD=rewy TABLE=0 \
  LIMIT_S=$((575 - (SECONDS - t0))) bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
REWY_KERNEL_TIMING=1 timeout 90 build-gpu/bench/bench_delta --ops deltanet,gdn,kda,gdn2 --shapes 3 --policies recompute \
  --gates bench --backward rewy --samples 3 >"$out/kernels_few_pairs.txt" 2>&1
echo "kernel timing exit $? at $((SECONDS - t0)) s"; grep -E "us/call|manual_time" "$out/kernels_few_pairs.txt" | cut -c1-120
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && cat /tmp/dd/decide.log | tail -30
grep -E "BesideForward|PrepBeside|StalledPrep" /tmp/dd/tests_default.log | head
