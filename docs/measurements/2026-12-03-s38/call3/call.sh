#!/usr/bin/env bash
# Device call 3 of the thirty-eighth session (carry .fla .triton-pack). Experiment `dgreg` (KDA's
# and GDN2's grad_chunk at K = V = 128, ReWY and baseline, on the one-pack defaults: ∂g's reverse
# cumsum on the fragments by shuffles, the row blocks' column totals through S3, ∂g stored from the
# fragments; no ∂G or K̄ ⊙ ∂K̄ fp32 tiles in shared memory; chunk_bwd.cuh's kDgReg): its GPU
# tests, sanitizers and ops against the defaults; the FLA table with the winners; each
# grad_chunk's phases at shape 0.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
VARIANTS=kda,gdn2 SETS='dgreg@kda,gdn2' LIMIT_S=570 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -50
[ -f /tmp/dd/table/ours.csv ] && python3 bench/compare_ours.py docs/measurements/2026-12-03-s38/call1/table/ours.csv /tmp/dd/table/ours.csv
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
