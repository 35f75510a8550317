#!/usr/bin/env bash
# Device call 3 of the forty-sixth session (carry .fla .triton-pack): the defaults at this commit
# (KDA's Recompute forward fused where wy_prep does not run beside the pass: kfuse, which passed
# KDA's tests and both sanitizers as an experiment in call 2): every GPU test and both sanitizers;
# nokfuse@kda (the unfused form) against them, with shape 1 (V-slices of 64, two stages) beside
# 0, 3, 5; ld68sh@gdn again (1.010x in call 2, most of it at shape 5), judged by the forward; the
# FLA table with the winners.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=1 VARIANTS=deltanet,gdn,kda,gdn2 SETS='nokfuse@kda ld68sh@gdn' PICK_DIRECTION=fwd \
  OPS_SHAPES=0,1,3,5 OPS_BACKWARD=rewy LIMIT_S=575 bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -45
if [ -f /tmp/dd/table/ours.csv ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s46/call2/table/ours.csv /tmp/dd/table/ours.csv | tail -14
  python3 bench/side_by_side.py --ours /tmp/dd/table/ours.csv --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
