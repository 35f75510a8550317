#!/usr/bin/env bash
# Device call 4 of the fiftieth session, prepared (no machine was lent after call 3; carry .fla
# .triton-pack): GDN's decay cut with the default as its fallback (dcutfb: the two-pass form at up
# to 16 pairs, the sequential forward at 17-32; the plan first, from k, at most 4 chunks back; its
# look-back word picks the path on the device) against the defaults at the benchmark's gates and
# at weak decay, shapes 2, 3, 5; the GDN tests (SegmentScanForward checks the path taken against
# the CPU plan) and both sanitizers under it; GDN's FLA table (OPS=gdn) with the set if it wins (FLA timed in
# the same call); then the kernels at shape 3 under it if time is left.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
OPS=gdn VARIANTS=gdn SETS='dcutfb@gdn' OPS_GATES=bench,weak PICK_DIRECTION=fwd OPS_SHAPES=2,3,5 OPS_BACKWARD=rewy \
  LIMIT_S=530 SETS_UNTIL_S=300 bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -30
grep -hE "decay cut" /tmp/dd/tests_dcutfb.log 2>/dev/null | head -14
[ -f /tmp/dd/table/side_by_side.txt ] && grep -E "^==|^gdn" /tmp/dd/table/side_by_side.txt | head -24
if [ $((SECONDS - t0)) -lt 540 ]; then
  for gates in bench weak; do
    REWY_EXPERIMENTS=dcutfb:gdn REWY_KERNEL_TIMING=1 timeout 15 build-gpu/bench/bench_delta --ops gdn --shapes 3 \
      --policies recompute --gates $gates --samples 3 --backward rewy 2>&1 | grep -E "us/call|fwd/" | grep -vE "grad_chunk|state_bwd|replay" | cut -c1-150
  done
fi
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
