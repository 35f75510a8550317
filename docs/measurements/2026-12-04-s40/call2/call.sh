#!/usr/bin/env bash
# Device call 2 of the fortieth session (carry .fla .triton-pack). Experiment `prep3` (DeltaNet's
# and GDN's wy_prep in the fused Recompute forward: the fused path alone, A over k and q, 60 KB
# and 80 registers, three CTAs an SM where the shared kernel fits two): its GPU tests, sanitizers,
# forward ops against the defaults (picked by the forward), the FLA table with the winner, phases.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
VARIANTS=deltanet,gdn SETS='prep3@deltanet,gdn' PICK_DIRECTION=fwd OPS_BACKWARD=rewy LIMIT_S=570 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -45
if [ -f /tmp/dd/table/ours.csv ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s40/call1/table/ours.csv /tmp/dd/table/ours.csv
  python3 bench/side_by_side.py --ours /tmp/dd/table/ours.csv --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
grep -hE "wy_prep.*(us/call|cycles)" /tmp/dd/phases_chosen.txt 2>/dev/null | cut -c1-220
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
