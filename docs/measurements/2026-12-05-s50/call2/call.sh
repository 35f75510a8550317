#!/usr/bin/env bash
# Device call 2 of the fiftieth session (carry .fla .triton-pack): the FLA table of the defaults
# (the first with the two-pass segment scan on for DeltaNet and GDN at up to 16 pairs), FLA timed
# in the same call; no tests (call 1 ran them on this commit).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=0 VARIANTS=deltanet,gdn,kda,gdn2 LIMIT_S=560 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && tail -40 /tmp/dd/decide.log
if [ -f /tmp/dd/table/ours.csv ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s46/call4/table/ours.csv /tmp/dd/table/ours.csv | tail -14
fi
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
