#!/usr/bin/env bash
# Device call 3 of the forty-ninth session (prepared; not run: the session's device time went to calls 1 and 2) (carry .fla .triton-pack): two prepared experiments on
# KDA and GDN2, each set's tests and sanitizers, judged by the forward at shapes 0, 1, 2, 4, 5:
# g2fuse@gdn2 (GDN2's Recompute forward in KDA's fused form where wy_prep runs before the pass) and
# uhalf@kda,gdn2 (the unfused output pass at V-slices of 128 by column halves), then the FLA table.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
VARIANTS=kda,gdn2 SETS='g2fuse@gdn2 uhalf@kda,gdn2' PICK_DIRECTION=fwd OPS_SHAPES=0,1,2,4,5 \
  OPS_BACKWARD=rewy LIMIT_S=575 bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -45
if [ -f /tmp/dd/table/ours.csv ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s46/call4/table/ours.csv /tmp/dd/table/ours.csv | tail -14
  python3 bench/side_by_side.py --ours /tmp/dd/table/ours.csv --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
