#!/usr/bin/env bash
# Device call 3b of the sixty-third session (carry .prebuilt; call 3 trimmed to the device time
# left, CALL_LIMIT_S): every GPU test on the defaults (the register pass beside wy_prep by TMA),
# then one round of timing against the experiments l2hint and reg4st (DeltaNet's Recompute forward
# at shapes 0, 2, 5) and tmabeside (KDA's and GDN2's at 2, 5), their tests, a second round if the
# time allows. Results land in $OUT as they come (a call cut short keeps them).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
limit=${CALL_LIMIT_S:-300}
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 200 gpu_test_delta bench_delta || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
grep "prebuilt:" "$out/build.log" | head -2
timeout $((limit - 150)) build-gpu/tests/gpu_test_delta >"$out/tests_default.log" 2>&1
echo "== every GPU test: exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$out/tests_default.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which" "$out/tests_default.log" | head -8
b=build-gpu/bench/bench_delta
ms() { grep -oE '^[a-z0-9]+/fwd/shape[0-9]|median_ms=[0-9.]+' "$1" | paste -sd' ' | sed 's/ median_ms=/=/g; s#/fwd/shape#@#g'; }
round() {
  for e in default l2hint reg4st; do
    REWY_EXPERIMENTS=${e#default} timeout 30 $b --ops deltanet --shapes 0,2,5 --policies recompute --gates bench \
      --backward rewy --samples 9 --benchmark_filter=fwd >"$out/fwd_${e}_$1.txt" 2>&1
    echo "== DeltaNet forward ms, $e, round $1: $(ms "$out/fwd_${e}_$1.txt")"
  done
  for e in default tmabeside; do
    REWY_EXPERIMENTS=${e#default} timeout 30 $b --ops kda,gdn2 --shapes 2,5 --policies recompute --gates bench \
      --backward rewy --samples 9 --benchmark_filter=fwd >"$out/fwdkg_${e}_$1.txt" 2>&1
    echo "== KDA, GDN2 forward ms, $e, round $1: $(ms "$out/fwdkg_${e}_$1.txt")"
  done
  echo "   at $((SECONDS - t0)) s"
}
round 1
beside='GpuDelta.PrepBesideMatchesSerial:GpuDelta.StalledPrepRaisesInsteadOfHanging:GpuDelta.BesideForwardOnlyWhereGridsRunSideBySide'
for e in reg4st tmabeside l2hint; do
  [ $((limit - (SECONDS - t0))) -ge 45 ] || break
  f="$beside:GpuDelta.DeltaNet*"; [ $e = tmabeside ] && f="$beside:$(rewy_gpu_test_filter kda,gdn2)"
  REWY_EXPERIMENTS=$e timeout 40 build-gpu/tests/gpu_test_delta --gtest_filter="$f" >"$out/tests_$e.log" 2>&1
  echo "== tests, $e: exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$out/tests_$e.log" | tr '\n' ' ')"
  grep -E "Failure|Expected|Which" "$out/tests_$e.log" | head -6
done
[ $((limit - (SECONDS - t0))) -ge 50 ] && round 2
echo "call done at $((SECONDS - t0)) s"
