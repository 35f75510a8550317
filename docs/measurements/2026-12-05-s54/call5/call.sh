#!/usr/bin/env bash
# Device call 5 of the fifty-fourth session (carry .prebuilt .fla .triton-pack; on the machine that
# call 4 left warm): the four-op FLA table at commit 19fcd72 (the decay-cut plan batched).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"
SETS=none VARIANTS=deltanet,gdn,kda,gdn2 OPS=deltanet,gdn,kda,gdn2 OPS_SHAPES=3 OPS_BACKWARD=rewy LIMIT_S=200 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "exit $?"
