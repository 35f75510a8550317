#!/usr/bin/env bash
# Device call 1 of the thirty-ninth session (carry .fla .triton-pack). Experiments `stackh` (KDA:
# ∂Q̂ = s ∂O Hᵀ in phase 2's k-loop beside R_W = −R_U Hᵀ; GDN2: ∂Q̂ with ∂W = −∂E Hᵀ in phase 1)
# and `stackhp` (KDA: stackh, and ∂P = s ∂O Eᵀ in phase 3's k-loop beside ∂A = −R_U Eᵀ), both in
# grad_chunk at K = V = 128 with ReWY: their GPU tests, sanitizers and ops against the defaults;
# the FLA table with the winners; each grad_chunk's phases at shape 0.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
VARIANTS=kda,gdn2 SETS='stackh@kda,gdn2 stackhp@kda' LIMIT_S=570 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -50
[ -f /tmp/dd/table/ours.csv ] && python3 bench/compare_ours.py docs/measurements/2026-12-03-s38/call3/table/ours.csv /tmp/dd/table/ours.csv
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
