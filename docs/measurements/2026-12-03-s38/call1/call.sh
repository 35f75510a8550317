#!/usr/bin/env bash
# Device call 1 of the thirty-eighth session (carry .fla .triton-pack). Experiment `onepack` (KDA's
# and GDN2's grad_chunk at K = V = 128, ReWY and baseline: phase 4's channel-gate operands built
# once a row in their own block's frame, 64 rows each where the packed per-block operands take 160,
# the contractions moving between frames on the accumulators; chunk_bwd.cuh's kOnePack): its GPU
# tests, sanitizers and ops against the defaults; the FLA table with the winners; each
# grad_chunk's phases at shape 0.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
VARIANTS=kda,gdn2 SETS='onepack@kda,gdn2' LIMIT_S=570 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -50
[ -f /tmp/dd/table/ours.csv ] && python3 bench/compare_ours.py docs/measurements/2026-12-03-s37/call3/table/ours.csv /tmp/dd/table/ours.csv
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
