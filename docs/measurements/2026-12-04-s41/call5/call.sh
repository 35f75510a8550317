#!/usr/bin/env bash
# Device call 5 of the forty-first session (carry .fla .triton-pack; about 330 s of device time
# left): experiment `fhalf` (DeltaNet's and GDN's fused forward pass by column halves: each
# warpgroup its own half of D, Q̂ H, E and O behind its own barriers). Its GPU tests, no
# sanitizers, no table; the ops at the fused shapes against the defaults, picked by the forward.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
VARIANTS=deltanet,gdn SETS='fhalf@deltanet,gdn' NOSAN='fhalf' PICK_DIRECTION=fwd OPS_BACKWARD=rewy \
  OPS_SHAPES=0,2,4,5 TABLE=0 LIMIT_S=300 bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -25
echo "call done at $((SECONDS - t0)) s"
