#!/usr/bin/env bash
# Device call 1 of the forty-third session (carry .fla .triton-pack): the defaults (fhalf at
# V-slices of 128, nowr, keeptb) against experiment keepgates (the Recompute forward of DeltaNet
# and GDN also keeps e^γ and GDN's row gates, so that neither backward runs wy_replay), with every
# GPU test and both sanitizers for each; the winner of the Recompute backward tabled beside FLA,
# phases at shape 0.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=1 VARIANTS=deltanet,gdn,kda,gdn2 SETS='keepgates@deltanet,gdn' LIMIT_S=575 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -30
if [ -f /tmp/dd/table/ours.csv ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s42/call4/table/ours.csv /tmp/dd/table/ours.csv
  python3 bench/side_by_side.py --ours /tmp/dd/table/ours.csv --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
grep -hE "(wy_replay|state_bwd).*(us/call|cycles)" /tmp/dd/phases_chosen.txt 2>/dev/null | cut -c1-200
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
