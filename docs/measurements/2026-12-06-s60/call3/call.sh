#!/usr/bin/env bash
# Device call 3 of the sixtieth session (carry .prebuilt .fla .triton-pack): experiment tbrows
# (DeltaNet, GDN, KDA), staged form: wy_prep writes 𝒯 and β of the rows, no 𝒯 Diag(β); the passes
# that read 𝒯 Diag(β) read 𝒯 and take β on the rows, staged with their tiles (the forward's and
# the replay's D, state_bwd's X). device-decide: the three variants' GPU tests and both sanitizers
# under it, their Recompute ops against the defaults at the six shapes, forward and backward, the
# FLA table with the set it picks (PICK_DIRECTION=both); then each kernel alone at shapes 0 and 4.
# CALL_LIMIT_S, CALL_SETS_UNTIL_S, CALL_KERNELS_UNTIL_S trim it.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
SETS='tbrows@deltanet,gdn,kda' VARIANTS=deltanet,gdn,kda PICK_DIRECTION=both OPS_SHAPES=0,1,2,3,4,5 OPS_BACKWARD=rewy \
  LIMIT_S=${CALL_LIMIT_S:-500} SETS_UNTIL_S=${CALL_SETS_UNTIL_S:-250} bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)|cycles:|us/call" /tmp/dd/decide.log | tail -40
rewy_device_build /tmp/rebuild.log 30 gpu_test_delta bench_delta >/dev/null  # (the pack's libraries on LD_LIBRARY_PATH)
b=build-gpu/bench/bench_delta
for shape in 0 4; do
  for e in "" tbrows; do
    [ $((SECONDS - t0)) -lt ${CALL_KERNELS_UNTIL_S:-470} ] || break
    REWY_EXPERIMENTS=$e REWY_KERNEL_TIMING=1 timeout 45 $b --ops deltanet,gdn,kda --shapes $shape --policies recompute \
      --gates bench --backward rewy --samples 5 >"$out/kernels_${e:-default}_s$shape.txt" 2>&1
    echo "== kernels ${e:-default} shape $shape"; grep -E "wy_prep|state_fwd_out|state_fwd_replay|state_bwd" "$out/kernels_${e:-default}_s$shape.txt" | cut -c1-110
  done
done
echo "call done at $((SECONDS - t0)) s"
