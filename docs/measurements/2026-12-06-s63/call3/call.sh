#!/usr/bin/env bash
# Device call 3 of the sixty-third session (carry .prebuilt): the register pass beside wy_prep by
# TMA as the default (call 2's tmaregst), and experiment l2hint (wy_prep beside it reads q, k and
# writes P, 𝒯 with L2's evict_last; the pass reads its boxes and stores O with evict_first). Every
# GPU test on the defaults, the beside tests under l2hint, then DeltaNet's Recompute forward at
# shapes 0, 2, 3, 5: default / notmareg / l2hint, two rounds; the beside clock with the register
# pass's data wait apart, default and l2hint. Experiment reg4st too (that pass at four stages,
# its stages' small parts apart and O staged in the step's own q tile): tests and timing. And
# experiment tmabeside (KDA's and GDN2's pass beside wy_prep, its W, K̄, Q̂, P by TMA boxes): their
# tests, their forward at shapes 0, 2, 5 against the default, two rounds, and the clock.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
grep "prebuilt:" "$out/build.log" | head -2
timeout 150 build-gpu/tests/gpu_test_delta >"$out/tests_default.log" 2>&1
echo "== every GPU test: exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$out/tests_default.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which" "$out/tests_default.log" | head -8
beside='GpuDelta.PrepBesideMatchesSerial:GpuDelta.StalledPrepRaisesInsteadOfHanging:GpuDelta.BesideForwardOnlyWhereGridsRunSideBySide'
for e in l2hint reg4st; do
  REWY_EXPERIMENTS=$e timeout 60 build-gpu/tests/gpu_test_delta --gtest_filter="$beside:GpuDelta.DeltaNet*" >"$out/tests_$e.log" 2>&1
  echo "== beside and DeltaNet tests, $e: exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$out/tests_$e.log" | tr '\n' ' ')"
  grep -E "Failure|Expected|Which" "$out/tests_$e.log" | head -6
done
REWY_EXPERIMENTS=tmabeside timeout 90 build-gpu/tests/gpu_test_delta --gtest_filter="$beside:$(rewy_gpu_test_filter kda,gdn2)" >"$out/tests_tmabeside.log" 2>&1
echo "== beside, KDA's and GDN2's tests, tmabeside: exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$out/tests_tmabeside.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which" "$out/tests_tmabeside.log" | head -6
b=build-gpu/bench/bench_delta
fwd() {  # fwd NAME ENV...: DeltaNet's Recompute forward at shapes 0, 2, 3, 5
  env "${@:2}" timeout 60 $b --ops deltanet --shapes 0,2,3,5 --policies recompute --gates bench --backward rewy \
    --samples 9 --benchmark_filter=fwd >"$out/fwd_$1.txt" 2>&1
}
for round in 1 2; do
  for e in default notmareg l2hint reg4st; do
    fwd time_${e}_$round REWY_EXPERIMENTS=${e#default}
    echo "== forward ms, $e, round $round: $(grep -oE '^[a-z0-9]+/fwd/shape[0-9]|median_ms=[0-9.]+' "$out/fwd_time_${e}_$round.txt" | paste -sd' ' | sed 's/ median_ms=/=/g; s#/fwd/shape#@#g')"
  done
  echo "   at $((SECONDS - t0)) s"
done
for round in 1 2; do
  for e in default tmabeside; do
    REWY_EXPERIMENTS=${e#default} timeout 60 $b --ops kda,gdn2 --shapes 0,2,5 --policies recompute --gates bench --backward rewy \
      --samples 9 --benchmark_filter=fwd >"$out/fwdkg_${e}_$round.txt" 2>&1
    echo "== KDA, GDN2 forward ms, $e, round $round: $(grep -oE '^[a-z0-9]+/fwd/shape[0-9]|median_ms=[0-9.]+' "$out/fwdkg_${e}_$round.txt" | paste -sd' ' | sed 's/ median_ms=/=/g; s#/fwd/shape#@#g')"
  done
done
echo "   at $((SECONDS - t0)) s"
for e in default tmabeside; do
  REWY_BESIDE_CLOCK=1 REWY_EXPERIMENTS=${e#default} timeout 60 $b --ops kda,gdn2 --shapes 2 --policies recompute --gates bench \
    --backward rewy --samples 5 --benchmark_filter=fwd >"$out/clockkg_$e.txt" 2>&1
  echo "== clock, $e:"; grep "beside clock" "$out/clockkg_$e.txt" | awk '{k=$3" "$4" "$5" "$6; last[k]=$0} END {for (k in last) print last[k]}' | sort | cut -c14-400
done
for e in default l2hint reg4st notmareg; do
  REWY_BESIDE_CLOCK=1 REWY_EXPERIMENTS=${e#default} timeout 60 $b --ops deltanet --shapes 2,5 --policies recompute --gates bench \
    --backward rewy --samples 5 --benchmark_filter=fwd >"$out/clock_$e.txt" 2>&1
  echo "== clock, $e:"; grep "beside clock" "$out/clock_$e.txt" | awk '{k=$3" "$4" "$5" "$6; last[k]=$0} END {for (k in last) print last[k]}' | sort | cut -c14-400
done
(cd "$out" && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz all.tar.gz)
echo "call done at $((SECONDS - t0)) s"
