#!/usr/bin/env bash
# Device call 1 of the forty-ninth session (carry .fla .triton-pack): every GPU test and both
# sanitizers on the defaults (DeltaNet's and GDN's fused forward no longer allocates W, U, Q̂, K̄:
# host code only, SASS unchanged), then, on DeltaNet and GDN at the few-pair shapes 2, 3, 5, the
# segment scan's three-pass (segscan) and two-pass forms (seg2p, seg2p32), GDN's decay cut (dcut)
# and ld68sh's second timing, each set's tests and sanitizers, judged by the forward.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=1 VARIANTS=deltanet,gdn \
  SETS='ld68sh segscan@deltanet,gdn seg2p@deltanet,gdn seg2p32@deltanet,gdn dcut@gdn' \
  NOSAN='ld68sh seg2p32' PICK_DIRECTION=fwd OPS_SHAPES=2,3,5 OPS_BACKWARD=rewy TABLE=0 \
  LIMIT_S=575 bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -60
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
