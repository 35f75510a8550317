#!/usr/bin/env bash
# Device call 3 of the fifty-second session (no carry; not run: no machine came): the device time left (about 380
# s) fits no device-decide call, so the decisions alone: build gpu_test_delta and bench_delta, GDN,
# KDA and GDN2 at shapes 2, 3, 5 (Recompute, ReWY backward, the benchmark's gates and weak decay,
# 10 samples) with the defaults, with dcutfb,dcutbwd (GDN) and with kseg2p (KDA, GDN2), compared
# by bench/compare_ours.py (above 1 the set is faster); then, while time is left, the tests of
# KDA's and GDN2's two-pass form under kseg2p (GDN's set passed its tests in call 1).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
rewy_device_build "$out/build.log" 240 gpu_test_delta bench_delta
echo "build exit $? at $((SECONDS - t0)) s"
b=build-gpu/bench/bench_delta
export OPS_SHAPES=2,3,5 OPS_POLICIES=recompute OPS_GATES=bench,weak OPS_BACKWARD=rewy
OPS_VARIANTS=gdn,kda,gdn2 rewy_ops_csv $b "$out/ops_default.csv"
OPS_VARIANTS=gdn rewy_ops_csv $b "$out/ops_dcut.csv" REWY_EXPERIMENTS=dcutfb,dcutbwd
OPS_VARIANTS=kda,gdn2 rewy_ops_csv $b "$out/ops_kseg2p.csv" REWY_EXPERIMENTS=kseg2p
echo "ops at $((SECONDS - t0)) s"
for e in dcut kseg2p; do
  for g in bench weak; do
    echo "== $e, $g gates"; python3 bench/compare_ours.py --gates $g "$out/ops_default.csv" "$out/ops_$e.csv"
  done
done
left=$((280 - (SECONDS - t0)))
if [ $left -gt 20 ]; then
  REWY_EXPERIMENTS=kseg2p timeout $left build-gpu/tests/gpu_test_delta \
    --gtest_filter='GpuDelta.ChannelGateTwoPassForward:GpuDelta.KDA:GpuDelta.GDN2:GpuDelta.EmptySequenceTakesTheSequentialPasses' \
    >"$out/tests_kseg2p.log" 2>&1
  echo "kseg2p tests exit $? at $((SECONDS - t0)) s"
  grep -E "Failure|Expected|OK \]|PASSED|FAILED" "$out/tests_kseg2p.log" | head -20
fi
echo "call done at $((SECONDS - t0)) s"
