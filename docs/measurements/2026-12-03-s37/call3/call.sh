#!/usr/bin/env bash
# Device call 3 of the thirty-seventh session (carry .fla .triton-pack). The new defaults (DeltaNet's
# and GDN's ReWY grad_chunk at K = V = 128 in the E-form, the bf16 twin forming ∂A from E for every
# variant there): every GPU test and both sanitizers. Experiment `dhkeep` (KDA's ReWY grad_chunk
# with ∂H⁺ kept in S4-S5 from the prologue to phase 5, not loaded twice; ∂O, then ∂E and R_U, in
# S2; chunk_bwd.cuh's kDhKeep): its tests, sanitizers and ops against the defaults; the FLA table
# with the winners; each grad_chunk's phases at shape 0.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=1 VARIANTS=deltanet,gdn,kda,gdn2 SETS='dhkeep@kda' LIMIT_S=570 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -50
[ -f /tmp/dd/table/ours.csv ] && python3 bench/compare_ours.py docs/measurements/2026-12-03-s37/call2/table/ours.csv /tmp/dd/table/ours.csv
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
