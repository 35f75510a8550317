#!/usr/bin/env bash
# Device call 3 of the forty-third session (carry .fla .triton-pack): experiment qfirst (GDN's
# state_bwd converts the next stage's q after waiting for q's own cp.async group, issued first,
# instead of for every tile of the stage) against the defaults (keepgates; ehalf and ehalfl, which
# did not pay in call 2, removed), its GPU tests and both sanitizers; the winner of the Recompute
# backward tabled beside FLA, phases at shape 0. (The defaults' tests and sanitizers ran in call 2
# on the same default kernels.)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
VARIANTS=deltanet,gdn,kda,gdn2 SETS='qfirst@gdn' LIMIT_S=575 \
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
