#!/usr/bin/env bash
# Device call 4 of the forty-second session (carry .fla .triton-pack): the defaults since call 3
# (fhalf at V-slices of 128, nowr) with every GPU test and both sanitizers (the sanitizers' K = V =
# 128 small case, prep_overlap off there), and experiment keeptb (the Recompute forward keeps its
# 𝒯 Diag(β) for the backward: DeltaNet's replay runs no wy_replay, GDN's forms only the gates);
# the winner of the Recompute backward tabled beside FLA, phases at shape 0.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=1 VARIANTS=deltanet,gdn,kda,gdn2 SETS='keeptb@deltanet,gdn' LIMIT_S=575 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -30
if [ -f /tmp/dd/table/ours.csv ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s42/call1/table/ours.csv /tmp/dd/table/ours.csv
  python3 bench/side_by_side.py --ours /tmp/dd/table/ours.csv --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
grep -hE "(wy_replay|state_bwd).*(us/call|cycles)" /tmp/dd/phases_chosen.txt 2>/dev/null | cut -c1-200
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
