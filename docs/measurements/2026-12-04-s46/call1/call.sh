#!/usr/bin/env bash
# Device call 1 of the forty-sixth session (carry .fla .triton-pack): the two prepared experiments
# against the defaults (31ee2b6; the defaults' SASS is dfce262's, which passed every GPU test and
# both sanitizers in the forty-fifth session's call 3): ld68 (wy_prep's fp32 A and 𝒯 tiles at a
# row pitch of 68 floats, all four variants) and pamsh@gdn (GDN's shared wy_prep with one
# exponential for P and A), each set's tests and sanitizers, judged by the forward, and the FLA
# table with the winners.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
VARIANTS=deltanet,gdn,kda,gdn2 SETS='ld68 pamsh@gdn' PICK_DIRECTION=fwd \
  OPS_BACKWARD=rewy LIMIT_S=575 bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -45
if [ -f /tmp/dd/table/ours.csv ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s45/call4/table/ours.csv /tmp/dd/table/ours.csv | tail -14
  python3 bench/side_by_side.py --ours /tmp/dd/table/ours.csv --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
