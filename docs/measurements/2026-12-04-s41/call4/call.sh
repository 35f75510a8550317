#!/usr/bin/env bash
# Device call 4 of the forty-first session (carry .fla .triton-pack): DeltaNet's and GDN's
# replay state pass forms E = 𝒯 Diag(β) (V − Γ ⊙ K H) as the fused forward does, at K = V = 128 and
# slices of 64 and 128 (wy_replay writes W and 𝒯 Diag(β), no U), each warpgroup forming half of D
# and E behind its own barrier (call 3 had warpgroup 0 form D whole). Every GPU test and both
# sanitizers on the defaults, all four variants' ops, the FLA table, phases at shape 0.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=1 VARIANTS=deltanet,gdn,kda,gdn2 LIMIT_S=575 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -30
if [ -f /tmp/dd/table/ours.csv ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s41/call3/table/ours.csv /tmp/dd/table/ours.csv
  python3 bench/side_by_side.py --ours /tmp/dd/table/ours.csv --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
grep -hE "(wy_replay|state_fwd_replay|state_bwd).*(us/call|cycles)" /tmp/dd/phases_chosen.txt 2>/dev/null | cut -c1-200
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
