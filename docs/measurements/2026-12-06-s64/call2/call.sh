#!/usr/bin/env bash
# Device call 2 of the sixty-fourth session, on call 1's warm machine (its build and FLA's compiled
# kernels in .triton-cache still there; carry .prebuilt .fla): the four-op FLA table on the
# defaults, FLA in the same call.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
SETS=none VARIANTS=deltanet,gdn,kda,gdn2 OPS_SHAPES=3 OPS_BACKWARD=rewy LIMIT_S=${LIMIT_S:-400} \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd2 && tar -xzf "$out/all.tar.gz" -C /tmp/dd2 && grep -E "^==|geomean|min |table|done|prebuilt" /tmp/dd2/decide.log | head -30
[ -f /tmp/dd2/table/side_by_side.txt ] && grep -E "^==|geomean|min " /tmp/dd2/table/side_by_side.txt | head -60
echo "call done at $((SECONDS - t0)) s"
