#!/usr/bin/env bash
# Device call 2 of the fifty-ninth session (carry .prebuilt .fla .triton-pack): experiment prep4,
# the fused forward's wy_prep (DeltaNet, GDN; K = 128, where it runs alone: shapes 0, 1, 3, 4) at
# four CTAs an SM (𝒯's fp32 tile over q's slot, 44 KB, at most 64 registers) against three.
# device-decide: DeltaNet's and GDN's GPU tests and both sanitizers under it, their Recompute ops
# against the defaults at the six shapes (no FLA table); then each kernel alone at shapes 0 and 4.
# CALL_LIMIT_S, CALL_KERNELS_UNTIL_S trim it to the device time left.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
SETS='prep4@deltanet,gdn' VARIANTS=deltanet,gdn PICK_DIRECTION=fwd OPS_SHAPES=0,1,2,3,4,5 OPS_BACKWARD=rewy TABLE=0 \
  LIMIT_S=${CALL_LIMIT_S:-330} SETS_UNTIL_S=${CALL_SETS_UNTIL_S:-250} bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)|cycles:|us/call" /tmp/dd/decide.log | tail -30
rewy_device_build /tmp/rebuild.log 30 gpu_test_delta bench_delta >/dev/null  # (the pack's libraries on LD_LIBRARY_PATH)
b=build-gpu/bench/bench_delta
for e in "" prep4; do
  for shape in 0 4; do
    [ $((SECONDS - t0)) -lt ${CALL_KERNELS_UNTIL_S:-400} ] || break
    REWY_EXPERIMENTS=$e REWY_KERNEL_TIMING=1 timeout 40 $b --ops deltanet,gdn --shapes $shape --policies recompute --gates bench \
      --backward rewy --samples 5 >"$out/kernels_${e:-default}_s$shape.txt" 2>&1
    echo "== kernels ${e:-default} shape $shape"; grep -E "wy_prep|state_fwd_out" "$out/kernels_${e:-default}_s$shape.txt" | cut -c1-140
  done
done
echo "call done at $((SECONDS - t0)) s"
