#!/usr/bin/env bash
# Device call 1 of the fiftieth session (carry .fla .triton-pack): every GPU test and both
# sanitizers on the defaults (the two-pass segment scan on for DeltaNet and GDN at up to 16 pairs;
# DeltaParams 16 bytes longer), then GDN's decay cut with its look-back (dcut) at the benchmark's
# gates and at weak decay, shapes 2, 3, 5, its tests and sanitizers, judged by the forward.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=1 VARIANTS=deltanet,gdn SETS='dcut@gdn' OPS_GATES=bench,weak PICK_DIRECTION=fwd \
  OPS_SHAPES=2,3,5 OPS_BACKWARD=rewy TABLE=0 LIMIT_S=560 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -60
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
