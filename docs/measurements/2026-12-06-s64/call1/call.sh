#!/usr/bin/env bash
# Device call 1 of the sixty-fourth session (carry .prebuilt .fla; the checkout was new, so no
# .triton-pack: FLA's kernels compile beside the tests and come back as OUT/triton-cache.tar.xz.NN).
# Every GPU test and both sanitizers on the sixty-third session's defaults (the register pass beside
# wy_prep by TMA at four stages, KDA's and GDN2's beside pass by TMA), which no device has run as
# built. No table here: FLA's compile leaves too little of the call; call 2 on the warm machine
# tables (docs/measurements/2026-12-06-s64/call2/call.sh).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
FLA_COMPILE=1 DEFAULT_TESTS=1 SETS=none TABLE=0 VARIANTS=deltanet,gdn,kda,gdn2 OPS=deltanet,gdn,kda,gdn2 OPS_SHAPES=3 \
  OPS_BACKWARD=rewy LIMIT_S=${LIMIT_S:-540} bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)" /tmp/dd/decide.log | tail -40
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
