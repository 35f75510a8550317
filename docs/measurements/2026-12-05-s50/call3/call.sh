#!/usr/bin/env bash
# Device call 3 of the fiftieth session, run right after call 2 on the same machine (its build kept) (carry .fla .triton-pack): two prepared experiments on
# KDA and GDN2, each set's tests and sanitizers, judged by the forward at shapes 0, 1, 2, 4, 5:
# g2fuse@gdn2 (GDN2's Recompute forward in KDA's fused form where wy_prep runs before the pass) and
# uhalf@kda,gdn2 (the unfused output pass at V-slices of 128 by column halves), then the FLA table.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
VARIANTS=kda,gdn2 SETS='g2fuse@gdn2 uhalf@kda,gdn2' PICK_DIRECTION=fwd OPS_SHAPES=0,1,2,4,5 \
  OPS_BACKWARD=rewy LIMIT_S=560 bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -50
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
