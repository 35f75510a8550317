#!/usr/bin/env bash
# Device call 3 of the fortieth session (carry .fla .triton-pack): prep3 as the default where
# wy_prep runs alone (the fused forward's own kernel, three CTAs an SM; the shared kernel beside
# the pass). Every GPU test and both sanitizers on the defaults, DeltaNet's and GDN's ops, the FLA
# table, phases at shape 0.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=1 VARIANTS=deltanet,gdn LIMIT_S=570 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -45
if [ -f /tmp/dd/table/ours.csv ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s40/call1/table/ours.csv /tmp/dd/table/ours.csv; python3 bench/compare_ours.py docs/measurements/2026-12-04-s40/call2/table/ours.csv /tmp/dd/table/ours.csv
  python3 bench/side_by_side.py --ours /tmp/dd/table/ours.csv --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
grep -hE "wy_prep.*(us/call|cycles)" /tmp/dd/phases_chosen.txt 2>/dev/null | cut -c1-220
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
