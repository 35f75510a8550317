#!/usr/bin/env bash
# Device call 4 of the sixtieth session (carry .prebuilt .fla .triton-pack): β on the rows is the
# default (DeltaNet, GDN, KDA; not DeltaNet at up to 32 pairs). device-decide: every GPU test and
# both sanitizers on the new defaults (GpuDelta.DkStateBackward's 128-pair case checks that its
# backward took the forward's 𝒯 with β on the rows), then notbrows's tests and the Recompute ops,
# defaults against notbrows at the six shapes, forward and backward (no FLA table).
# CALL_LIMIT_S trims it to the device time left.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=1 SETS='notbrows@deltanet,gdn,kda' NOSAN=notbrows VARIANTS=deltanet,gdn,kda PICK_DIRECTION=both \
  OPS_SHAPES=0,1,2,3,4,5 OPS_BACKWARD=rewy TABLE=0 LIMIT_S=${CALL_LIMIT_S:-420} SETS_UNTIL_S=${CALL_SETS_UNTIL_S:-330} \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)|cycles:|us/call" /tmp/dd/decide.log | tail -30
echo "call done at $((SECONDS - t0)) s"
