#!/usr/bin/env bash
# Device call 2 of the sixty-third session (carry .prebuilt): experiments tmareg (the register
# pass's stage by TMA boxes: thread 0 issues 6 + BV / 64 boxes where each thread issued 28 cp.async
# on the step's chain) and tmaregst (O's whole chunks by a TMA store too). DeltaNet's and GDN's
# GPU tests under tmaregst, then the Recompute forward of both at the six shapes, default /
# tmareg / tmaregst, two rounds; the kernel table once each; the beside clock with phases.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
grep "prebuilt:" "$out/build.log" | head -2
beside='GpuDelta.PrepBesideMatchesSerial:GpuDelta.StalledPrepRaisesInsteadOfHanging:GpuDelta.BesideForwardOnlyWhereGridsRunSideBySide'
filter="$(rewy_gpu_test_filter deltanet,gdn cases):$beside"
REWY_EXPERIMENTS=tmaregst timeout 120 build-gpu/tests/gpu_test_delta --gtest_filter="$filter" >"$out/tests_tmaregst.log" 2>&1
echo "== DeltaNet's and GDN's tests, tmaregst: exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$out/tests_tmaregst.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which" "$out/tests_tmaregst.log" | head -8
b=build-gpu/bench/bench_delta
fwd() {  # fwd NAME ENV...: the Recompute forward of DeltaNet and GDN at the six shapes
  env "${@:2}" timeout 90 $b --ops deltanet,gdn --shapes 0,1,2,3,4,5 --policies recompute --gates bench --backward rewy \
    --samples 9 --benchmark_filter=fwd >"$out/fwd_$1.txt" 2>&1
}
for e in default tmareg tmaregst; do  # (shapes 0 and 4: the serial forward; the table synchronises after each kernel)
  REWY_KERNEL_TIMING=1 REWY_EXPERIMENTS=${e#default} timeout 60 $b --ops deltanet,gdn --shapes 0,4 --policies recompute \
    --gates bench --backward rewy --samples 5 --benchmark_filter=fwd >"$out/kernels_$e.txt" 2>&1
  echo "== kernels, $e:"; grep -E "state_fwd_reg|wy_prep" "$out/kernels_$e.txt" | cut -c1-110
done
for round in 1 2; do
  for e in default tmareg tmaregst; do
    fwd time_${e}_$round REWY_EXPERIMENTS=${e#default}
    echo "== forward ms, $e, round $round: $(grep -oE '^[a-z0-9]+/fwd/shape[0-9]|median_ms=[0-9.]+' "$out/fwd_time_${e}_$round.txt" | paste -sd' ' | sed 's/ median_ms=/=/g; s#/fwd/shape#@#g')"
  done
  echo "   at $((SECONDS - t0)) s"
done
for e in default tmaregst; do
  REWY_BESIDE_CLOCK=1 REWY_EXPERIMENTS=${e#default} timeout 60 $b --ops deltanet,gdn --shapes 2,5 --policies recompute --gates bench \
    --backward rewy --samples 5 --benchmark_filter=fwd >"$out/clock_$e.txt" 2>&1
  echo "== clock, $e:"; grep "beside clock" "$out/clock_$e.txt" | awk '{k=$3" "$4" "$5" "$6; last[k]=$0} END {for (k in last) print last[k]}' | sort | cut -c14-400
done
(cd "$out" && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz all.tar.gz)
echo "call done at $((SECONDS - t0)) s"
