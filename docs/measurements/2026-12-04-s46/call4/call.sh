#!/usr/bin/env bash
# Device call 4 of the forty-sixth session (carry .fla .triton-pack): the defaults at this commit
# (KDA's Recompute forward fused at V-slices of 64 and 128 where wy_prep does not run beside the
# pass; Config::fuse_kda_forward, off in PrepBesideMatchesSerial, which failed in call 3 for that;
# GpuDelta.FusedKdaForward new): every GPU test and both sanitizers, then the FLA table.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=1 VARIANTS=deltanet,gdn,kda,gdn2 \
  LIMIT_S=480 bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -45
if [ -f /tmp/dd/table/ours.csv ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s46/call2/table/ours.csv /tmp/dd/table/ours.csv | tail -14
  python3 bench/side_by_side.py --ours /tmp/dd/table/ours.csv --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
