#!/usr/bin/env bash
# Device call 3 of the sixty-third session (carry .prebuilt .fla .triton-pack; CALL_LIMIT_S: the
# session's device time left): the register pass beside wy_prep by TMA as the default (call 2's
# tmaregst); every GPU test on it. Experiments: l2hint (wy_prep beside that pass reads q, k and
# writes P, 𝒯 with L2's evict_last; the pass reads its boxes and stores O with evict_first), reg4st
# (that pass at four stages: the stages' small parts apart, O staged in the step's own q tile),
# tmabeside (KDA's and GDN2's pass beside wy_prep, its W, K̄, Q̂, P by TMA boxes). Timing first
# (DeltaNet at shapes 0, 2, 3, 5: default / notmareg / l2hint / reg4st; KDA and GDN2 at 0, 2, 5:
# default / tmabeside; two rounds), then the experiments' tests, the beside clocks, and the
# four-op FLA table on the defaults if the time left allows.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
limit=${CALL_LIMIT_S:-0}
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta delta_accuracy rewy || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
grep "prebuilt:" "$out/build.log" | head -2
timeout 150 build-gpu/tests/gpu_test_delta >"$out/tests_default.log" 2>&1
echo "== every GPU test: exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$out/tests_default.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which" "$out/tests_default.log" | head -8
b=build-gpu/bench/bench_delta
ms() { grep -oE '^[a-z0-9]+/fwd/shape[0-9]|median_ms=[0-9.]+' "$1" | paste -sd' ' | sed 's/ median_ms=/=/g; s#/fwd/shape#@#g'; }
for round in 1 2; do
  for e in default notmareg l2hint reg4st; do
    REWY_EXPERIMENTS=${e#default} timeout 60 $b --ops deltanet --shapes 0,2,3,5 --policies recompute --gates bench \
      --backward rewy --samples 9 --benchmark_filter=fwd >"$out/fwd_${e}_$round.txt" 2>&1
    echo "== DeltaNet forward ms, $e, round $round: $(ms "$out/fwd_${e}_$round.txt")"
  done
  for e in default tmabeside; do
    REWY_EXPERIMENTS=${e#default} timeout 60 $b --ops kda,gdn2 --shapes 0,2,5 --policies recompute --gates bench \
      --backward rewy --samples 9 --benchmark_filter=fwd >"$out/fwdkg_${e}_$round.txt" 2>&1
    echo "== KDA, GDN2 forward ms, $e, round $round: $(ms "$out/fwdkg_${e}_$round.txt")"
  done
  echo "   at $((SECONDS - t0)) s"
done
beside='GpuDelta.PrepBesideMatchesSerial:GpuDelta.StalledPrepRaisesInsteadOfHanging:GpuDelta.BesideForwardOnlyWhereGridsRunSideBySide'
for e in l2hint reg4st tmabeside; do
  f="$beside:GpuDelta.DeltaNet*"; [ $e = tmabeside ] && f="$beside:$(rewy_gpu_test_filter kda,gdn2)"
  REWY_EXPERIMENTS=$e timeout 90 build-gpu/tests/gpu_test_delta --gtest_filter="$f" >"$out/tests_$e.log" 2>&1
  echo "== tests, $e: exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$out/tests_$e.log" | tr '\n' ' ')"
  grep -E "Failure|Expected|Which" "$out/tests_$e.log" | head -6
done
for e in default reg4st tmabeside; do
  REWY_BESIDE_CLOCK=1 REWY_EXPERIMENTS=${e#default} timeout 60 $b --ops deltanet,kda --shapes 2 --policies recompute --gates bench \
    --backward rewy --samples 3 --benchmark_filter=fwd >"$out/clock_$e.txt" 2>&1
  echo "== clock, $e:"; grep "beside clock" "$out/clock_$e.txt" | awk '{k=$3" "$4" "$5" "$6; last[k]=$0} END {for (k in last) print last[k]}' | sort | cut -c14-400
done
(cd "$out" && tar -czf /tmp/part.tar.gz . && find . -mindepth 1 -delete && mv /tmp/part.tar.gz call3.tar.gz)
left=$((limit - (SECONDS - t0)))
echo "== at $((SECONDS - t0)) s, $left s of the limit left"
if [ $left -ge 170 ] && [ -d .fla ]; then
  SETS=none VARIANTS=deltanet,gdn,kda,gdn2 OPS_SHAPES=3 OPS_BACKWARD=rewy LIMIT_S=$((left - 25)) \
    bash scripts/device-decide.sh >"$out/decide.log" 2>&1
  echo "decide exit $? at $((SECONDS - t0)) s"
  mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -E "^==|geomean|min |table|done" /tmp/dd/decide.log | head -30
fi
echo "call done at $((SECONDS - t0)) s"
