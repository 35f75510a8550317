#!/usr/bin/env bash
# Device call 2 of the fifty-third session (carry .prebuilt .fla .triton-pack; .prebuilt from
# scripts/prebuilt-pack.sh saves the build where its stamp matches): GDN's decay cut on both
# passes made the default (call 1 of this session, docs/measurements/2026-12-05-s53/call1/, chose
# it: 1.40x forward and 1.10x backward at the benchmark's gates at shapes 2, 3, 5; 0.94x / 0.95x at
# weak decay; the backward's since bounded to 256 chunks); every delta GPU test and both
# sanitizers on the new defaults, then the FLA table of all four ops. About 500 s on a fresh machine
# (LIMIT_S, default 570, bounds the call: the table runs only with 140 s left).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=1 SETS=none VARIANTS=deltanet,gdn,kda,gdn2 OPS=deltanet,gdn,kda,gdn2 OPS_SHAPES=3 OPS_BACKWARD=rewy LIMIT_S=${LIMIT_S:-570} \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)" /tmp/dd/decide.log | tail -60
[ -f /tmp/dd/table/side_by_side.txt ] && grep -E "^==|^(deltanet|gdn|kda|gdn2) " /tmp/dd/table/side_by_side.txt | head -80
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
