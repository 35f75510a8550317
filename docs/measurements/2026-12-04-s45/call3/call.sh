#!/usr/bin/env bash
# Device call 3 of the forty-fifth session (carry .fla .triton-pack): GDN's wy_prep computing one
# e^{G_r - G_c} for P's and A's entry (r, c) (kOneExp, the new default: 30 MUFU and 213 LDS in the
# fused kernel's SASS against 46 and 245) against the old two-pass form (experiment pamold, the
# fused kernel alone), judged by the forward; the defaults' GPU tests and both sanitizers first
# (octsw removed: KDA's and GDN2's kernels as at a884e51's defaults), the FLA table with the winner.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=1 VARIANTS=deltanet,gdn,kda,gdn2 SETS='pamold@gdn' PICK_DIRECTION=fwd OPS_SHAPES=0,1,4 \
  OPS_BACKWARD=rewy LIMIT_S=575 bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -45
if [ -f /tmp/dd/table/ours.csv ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s45/call1/table/ours.csv /tmp/dd/table/ours.csv | tail -14
  python3 bench/side_by_side.py --ours /tmp/dd/table/ours.csv --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
