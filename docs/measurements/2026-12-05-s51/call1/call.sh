#!/usr/bin/env bash
# Device call 1 of the fifty-first session, prepared (no machine was lent this session; carry .fla
# .triton-pack): GDN's decay cut on both passes as one set, dcutfb (the forward's, with the default
# as its fallback: the plan first, at most 8 chunks back, its word picking the path on the device)
# and dcutbwd (the backward's: the plan's starts and stops, the replay's pass and state_bwd from
# the cuts at whole-V slices, or the default passes), against the defaults at the benchmark's gates
# and at weak decay, shapes 2, 3, 5 (compare_ours prints the forward and the backward apart); the
# GDN tests (SegmentScanForward and DecayCutBackward check the path taken against the CPU plan)
# and both sanitizers under it; GDN's FLA table with the set if it wins (judged by the geomean of
# both directions; FLA timed in the same call); then the kernels at shape 3 under it.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
OPS=gdn VARIANTS=gdn SETS='dcutfb,dcutbwd@gdn' OPS_GATES=bench,weak PICK_DIRECTION=both OPS_SHAPES=2,3,5 \
  OPS_BACKWARD=rewy LIMIT_S=530 SETS_UNTIL_S=300 bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -30
grep -hE "decay cut|passes\)" /tmp/dd/tests_dcutfb,dcutbwd.log 2>/dev/null | head -24
[ -f /tmp/dd/table/side_by_side.txt ] && grep -E "^==|^gdn" /tmp/dd/table/side_by_side.txt | head -24
# The empty-sequence test (new, not in device-decide's filters until it has passed once), apart.
[ $((SECONDS - t0)) -lt 530 ] &&
  timeout 35 build-gpu/tests/gpu_test_delta --gtest_filter=GpuDelta.EmptySequenceTakesTheSequentialPasses 2>&1 |
  grep -E "Failure|Expected|error|OK \]|FAILED|PASSED" | head -12
if [ $((SECONDS - t0)) -lt 540 ]; then
  for gates in bench weak; do
    REWY_EXPERIMENTS=dcutfb:gdn,dcutbwd:gdn REWY_KERNEL_TIMING=1 timeout 15 build-gpu/bench/bench_delta --ops gdn \
      --shapes 3 --policies recompute --gates $gates --samples 3 --backward rewy 2>&1 | grep -E "us/call|fwd/|bwd/" | cut -c1-150
  done
fi
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
