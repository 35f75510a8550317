#!/usr/bin/env bash
# Device call 3 of the sixty-fifth session (carry .prebuilt): DeltaNet's GPU tests with the
# 40-pair case moved last (the rotation then gives it V-slices of 64 and 128 under Recompute, and
# the test expects the default one-kernel forward there), then GDN's and DeltaNet's Recompute
# forward at (2, 8192, 16) and (1, 32768, 32) beside wy_prep: the default, notmareg (cp.async) and
# reg3st (three TMA stages), two rounds (call 2 had GDN at (1, 32768, 32) at 1.088 ms where the
# sixty-second to sixty-fourth sessions' tables had 0.84-0.90).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
pack() { (cd "$out" && tar -czf /tmp/c3.tar.gz . && find . -mindepth 1 -delete && mv /tmp/c3.tar.gz all.tar.gz); }
trap pack EXIT
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
grep -E "prebuilt" "$out/build.log" | head -3
timeout 60 build-gpu/tests/gpu_test_delta --gtest_filter="GpuDelta.DeltaNet" >"$out/tests_deltanet.log" 2>&1
echo "== DeltaNet test exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$out/tests_deltanet.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which|no forward" "$out/tests_deltanet.log" | head -8
grep -E "^deltanet T=  256 .*recompute" "$out/tests_deltanet.log" | cut -c1-120
b=build-gpu/bench/bench_delta
for r in 1 2; do
  for e in default notmareg reg3st; do
    env $([ $e = default ] || echo REWY_EXPERIMENTS=$e) timeout 40 $b --ops gdn,deltanet --shapes 2,5 --policies recompute \
      --gates bench --samples 10 --backward rewy --csv "$out/ops_${e}_$r.csv" >"$out/ops_${e}_$r.log" 2>&1
    echo "   $e round $r at $((SECONDS - t0)) s: $(grep ',fwd,' "$out/ops_${e}_$r.csv" | cut -d, -f1-4,10 | tr '\n' ' ')"
  done
done
echo "call done at $((SECONDS - t0)) s"
