#!/usr/bin/env bash
# Device call 1 of the forty-fifth session (carry .fla .triton-pack): the defaults at a884e51
# (9edb742's load8_shared in the gated grad_chunk has run GDN's, KDA's and GDN2's tests and GDN's
# small sanitizer case only): every GPU test and both sanitizers on them, the prepared experiment
# octsw (KDA's and GDN2's wy_prep_split operand builds read fp32 gate octets with the 16-byte
# halves swapped in threads 4-7 of each quarter-warp) against them, judged by the forward, and the
# FLA table with the winner.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=1 VARIANTS=deltanet,gdn,kda,gdn2 SETS='octsw@kda,gdn2' PICK_DIRECTION=fwd \
  OPS_BACKWARD=rewy LIMIT_S=575 bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -45
if [ -f /tmp/dd/table/ours.csv ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s44/call4/table/ours.csv /tmp/dd/table/ours.csv | tail -14
  python3 bench/side_by_side.py --ours /tmp/dd/table/ours.csv --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
