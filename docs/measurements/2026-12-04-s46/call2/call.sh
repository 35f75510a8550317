#!/usr/bin/env bash
# Device call 2 of the forty-sixth session (carry .fla .triton-pack): two experiments against the
# defaults (b1118ca; ld68 now the default, its kernels' SASS that of call 1, which passed every GPU
# test and both sanitizers): ld68sh@deltanet,gdn (the shared and overlapped wy_prep at a row pitch
# of 68) and kfuse@kda (KDA's Recompute forward forming E in the state pass from 𝒯 Diag(β),
# K ⊙ Γ and v; wy_prep_split writes no W or U), each set's tests and sanitizers, judged by the
# forward, and the FLA table with the winners.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
VARIANTS=deltanet,gdn,kda,gdn2 SETS='ld68sh@deltanet,gdn kfuse@kda' PICK_DIRECTION=fwd \
  OPS_BACKWARD=rewy LIMIT_S=575 bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -45
if [ -f /tmp/dd/table/ours.csv ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s46/call1/table/ours.csv /tmp/dd/table/ours.csv | tail -14
  python3 bench/side_by_side.py --ours /tmp/dd/table/ours.csv --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
