#!/usr/bin/env bash
# Device call 2 of the forty-third session (carry .fla .triton-pack): the defaults with keepgates
# for DeltaNet and GDN (wy_replay's GATES instance gone) against experiments ehalf and ehalfl
# (state_bwd's TBW at V-slices of 128: both warpgroups form ∂E and X, each its own half of their
# columns; ehalfl issues Q̂ᵀ∂O behind X), every GPU test and both sanitizers for each; the winner
# of the Recompute backward tabled beside FLA, phases at shape 0.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=1 VARIANTS=deltanet,gdn,kda,gdn2 SETS='ehalf@deltanet,gdn ehalfl@deltanet,gdn' LIMIT_S=575 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -30
if [ -f /tmp/dd/table/ours.csv ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s43/call1/table/ours.csv /tmp/dd/table/ours.csv
  python3 bench/side_by_side.py --ours /tmp/dd/table/ours.csv --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
grep -hE "(wy_replay|state_bwd).*(us/call|cycles)" /tmp/dd/phases_chosen.txt 2>/dev/null | cut -c1-200
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
