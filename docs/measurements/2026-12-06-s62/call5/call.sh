#!/usr/bin/env bash
# Device call 5 of the sixty-second session (carry .prebuilt; about 200 s): the pass beside
# wy_prep steps at 2.1 us against 1.71 alone (call 3) at the same SM clock (call 4). Its fence
# point is the one thing it runs only beside wy_prep: every kFenceEvery steps thread 0 reads the
# next flags and runs fence.acq_rel.gpu (MEMBAR.ALL.GPU: waits for its stores of O, then
# CCTL.IVALL) before the block barrier. Experiments flagacq (acquire loads, no fence) and
# fenceacq (the relaxed loads, then fence.acquire.gpu: CCTL.IVALL alone). Their beside tests,
# the clock, and the Recompute forward of DeltaNet, KDA, GDN2 at shapes 2 and 5, twice in turn.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
beside='GpuDelta.PrepBesideMatchesSerial:GpuDelta.StalledPrepRaisesInsteadOfHanging:GpuDelta.BesideForwardOnlyWhereGridsRunSideBySide'
for e in flagacq fenceacq; do
  REWY_EXPERIMENTS=$e timeout 90 build-gpu/tests/gpu_test_delta --gtest_filter="$beside" >"$out/tests_beside_$e.log" 2>&1
  echo "== beside tests, $e: exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$out/tests_beside_$e.log" | tr '\n' ' ')"
  grep -E "Failure|Expected|Which" "$out/tests_beside_$e.log" | head -6
done
b=build-gpu/bench/bench_delta
fwd() {  # fwd NAME ENV...: the Recompute forward of DeltaNet, KDA, GDN2 at shapes 2 and 5
  env "${@:2}" timeout 60 $b --ops deltanet,kda,gdn2 --shapes 2,5 --policies recompute --gates bench --backward rewy \
    --samples 9 --benchmark_filter=fwd >"$out/fwd_$1.txt" 2>&1
}
for e in default flagacq fenceacq; do
  fwd clock_$e REWY_BESIDE_CLOCK=1 REWY_EXPERIMENTS=${e#default}
  echo "== clock, $e:"; grep "beside clock" "$out/fwd_clock_$e.txt" | awk '{k=$3" "$4" "$5" "$6; last[k]=$0} END {for (k in last) print last[k]}' | sort | cut -c14-330
done
for round in 1 2; do
  for e in default flagacq fenceacq; do
    fwd time_${e}_$round REWY_EXPERIMENTS=${e#default}
    echo "== forward ms, $e, round $round: $(grep -oE '^[a-z0-9]+/fwd/shape[0-9]|median_ms=[0-9.]+' "$out/fwd_time_${e}_$round.txt" | paste -sd' ' | sed 's/ median_ms=/=/g; s#/fwd/shape#@#g')"
  done
done
echo "call done at $((SECONDS - t0)) s"
