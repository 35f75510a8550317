#!/usr/bin/env bash
# Prepared for the next session (not run in the fifty-fourth: no device time left). Carry .prebuilt
# .fla .triton-pack. The experiment planpdl (GDN's wy_prep as a programmatic dependent of the decay
# cut's plan that never waits for it, where the two-pass fallback's form does not read the plan;
# call 6's probe: the launches after such a dependent wait for both grids): GDN's GPU tests, memcheck
# and racecheck under it, whole ops at shapes 2, 3, 5 at the benchmark's and weak gates against the
# defaults (the plan is 16 us of the forward's chain at (1, 16384, 16); it changes no backward),
# judged by the forward, then GDN's FLA table with the winner. About 250 s with the pack.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
SETS='planpdl@gdn' VARIANTS=gdn OPS=gdn OPS_SHAPES=2,3,5 OPS_GATES=bench,weak OPS_BACKWARD=rewy PICK_DIRECTION=fwd \
  LIMIT_S=${LIMIT_S:-400} bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)|cycles:|us/call" /tmp/dd/decide.log | tail -40
echo "call done at $((SECONDS - t0)) s"
