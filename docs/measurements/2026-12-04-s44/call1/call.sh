#!/usr/bin/env bash
# Device call 1 of the forty-fourth session (carry .fla; no .triton-pack: FLA compiles beside the
# build): the defaults at c341ac7 (the forty-third session's review, first run on the device).
# Every GPU test and both sanitizers (GpuDelta.UnfusedForwardKeepsTbetaForReplay among them), whole
# ops at shape 0, the FLA table, each kernel's phases at shape 0 (all four variants).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
FLA_COMPILE=1 DEFAULT_TESTS=1 VARIANTS=deltanet,gdn,kda,gdn2 OPS_SHAPES=0 LIMIT_S=575 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -40
if [ -f /tmp/dd/table/ours.csv ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s43/call3/table/ours.csv /tmp/dd/table/ours.csv
  python3 bench/side_by_side.py --ours /tmp/dd/table/ours.csv --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
