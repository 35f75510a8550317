#!/usr/bin/env bash
# Device call 8 of the sixty-second session (carry .prebuilt; about 60 s from the pack): call 7
# put the growth of the pass's step beside wy_prep in its stage wait (+25%) and its last phase
# (+38%: the update, O, and the fence point, whose relaxed flag loads are an L2 round trip the
# whole CTA waits for at the barrier every kFenceEvery steps). Experiment flagearly issues those
# loads at the step's start. Its beside tests, then the clock (with the phases) and the
# Recompute forward of DeltaNet, KDA, GDN2 at shapes 2 and 5, default and flagearly, two rounds.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
beside='GpuDelta.PrepBesideMatchesSerial:GpuDelta.StalledPrepRaisesInsteadOfHanging:GpuDelta.BesideForwardOnlyWhereGridsRunSideBySide'
REWY_EXPERIMENTS=flagearly timeout 90 build-gpu/tests/gpu_test_delta --gtest_filter="$beside" >"$out/tests_beside_flagearly.log" 2>&1
echo "== beside tests, flagearly: exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$out/tests_beside_flagearly.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which" "$out/tests_beside_flagearly.log" | head -6
b=build-gpu/bench/bench_delta
fwd() {  # fwd NAME ENV...: the Recompute forward of DeltaNet, KDA, GDN2 at shapes 2 and 5
  env "${@:2}" timeout 60 $b --ops deltanet,kda,gdn2 --shapes 2,5 --policies recompute --gates bench --backward rewy \
    --samples 9 --benchmark_filter=fwd >"$out/fwd_$1.txt" 2>&1
}
for e in default flagearly; do
  fwd clock_$e REWY_BESIDE_CLOCK=1 REWY_EXPERIMENTS=${e#default}
  echo "== clock, $e:"; grep "beside clock" "$out/fwd_clock_$e.txt" | awk '{k=$3" "$4" "$5" "$6; last[k]=$0} END {for (k in last) print last[k]}' | sort | cut -c14-400
done
for round in 1 2; do
  for e in default flagearly; do
    fwd time_${e}_$round REWY_EXPERIMENTS=${e#default}
    echo "== forward ms, $e, round $round: $(grep -oE '^[a-z0-9]+/fwd/shape[0-9]|median_ms=[0-9.]+' "$out/fwd_time_${e}_$round.txt" | paste -sd' ' | sed 's/ median_ms=/=/g; s#/fwd/shape#@#g')"
  done
done
(cd "$out" && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz all.tar.gz)
echo "call done at $((SECONDS - t0)) s"
