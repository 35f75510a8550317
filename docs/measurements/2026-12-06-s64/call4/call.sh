#!/usr/bin/env bash
# Device call 4 of the sixty-fourth session (carry .prebuilt .fla .triton-pack; docs/measurements
# moved aside but for this folder, the carry's 64 MiB): experiment ffwd again, its registers
# rebalanced inside the CTA's pool (call 3 hung: 80 + 2 · 216 exceeds the 3 · 168 the launch gave).
# DeltaNet's GPU tests under it (the call ends if they hang or fail), memcheck and racecheck on the
# small case, DeltaNet's ops at the six shapes (default and ffwd alternating twice), the one
# kernel's producer phases at shapes 0 and 4, then DeltaNet's FLA table under ffwd, FLA in the
# same call, while CALL_LIMIT_S lasts.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS; limit=${CALL_LIMIT_S:-480}
export NCCL_NVLS_ENABLE=0
pack() { (cd "$out" && gzip -9 -f san_*.log 2>/dev/null; tar -czf /tmp/c4.tar.gz . && find . -mindepth 1 -delete && mv /tmp/c4.tar.gz all.tar.gz); }
trap pack EXIT
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
grep -E "prebuilt" "$out/build.log" | head -3
filter=$(rewy_gpu_test_filter deltanet)
REWY_EXPERIMENTS=ffwd timeout 90 build-gpu/tests/gpu_test_delta --gtest_filter="$filter" >"$out/tests_ffwd.log" 2>&1
rc=$?
echo "== ffwd tests exit $rc at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$out/tests_ffwd.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which|error|no forward" "$out/tests_ffwd.log" | head -12
grep -E "^deltanet .*K=128 V=128 .*Recompute .*BV=(64|128)" "$out/tests_ffwd.log" | cut -c1-230 | head -6
[ $rc -eq 124 ] && { echo "hung: $(grep -E '^\[ RUN' "$out/tests_ffwd.log" | tail -1)"; tail -3 "$out/tests_ffwd.log"; exit 1; }
for tool in memcheck racecheck; do
  REWY_EXPERIMENTS=ffwd REWY_GPU_TEST_SMALL=1 timeout 120 compute-sanitizer --tool $tool --error-exitcode 1 \
    build-gpu/tests/gpu_test_delta --gtest_filter="GpuDelta.DeltaNet" >"$out/san_$tool.log" 2>&1
  echo "   $tool exit $? at $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1)"
  grep -E "Error|Race|Invalid|Address" "$out/san_$tool.log" | sed -E 's/\+0x[0-9a-f]+//g' | sort | uniq -c | sort -rn | head -6
done
b=build-gpu/bench/bench_delta
ops() {  # ops NAME [VAR=VALUE]
  env ${2:+"$2"} timeout 60 $b --ops deltanet --shapes 0,1,2,3,4,5 --policies recompute --gates bench --samples 10 \
    --backward rewy --csv "$out/ops_$1.csv" >"$out/ops_$1.log" 2>&1
  echo "   ops $1 exit $? at $((SECONDS - t0)) s"
}
ops default1; ops ffwd1 REWY_EXPERIMENTS=ffwd; ops default2; ops ffwd2 REWY_EXPERIMENTS=ffwd
for r in 1 2; do echo "== round $r (ffwd / default)"; python3 bench/compare_ours.py "$out/ops_default$r.csv" "$out/ops_ffwd$r.csv"; done
grep -hE "deltanet/fwd" "$out/ops_ffwd1.log" | cut -c1-120
for sh in 0 4; do
  REWY_EXPERIMENTS=ffwd REWY_KERNEL_TIMING=2 timeout 40 $b --ops deltanet --shapes $sh --policies recompute --gates bench \
    --samples 3 --backward rewy >"$out/phases_ffwd_$sh.txt" 2>&1
  echo "== shape $sh: the one kernel and its producer's phases"
  grep -hE "fwd_fused" "$out/phases_ffwd_$sh.txt" | cut -c1-220 | head -4
done
left=$((limit - 15 - (SECONDS - t0)))
if [ $left -ge 90 ]; then
  mkdir -p "$out/table"
  rewy_fla_table "$out/table" "$left" REWY_EXPERIMENTS=ffwd OPS=deltanet POLICIES=recompute GATES=bench
  echo "table exit $? at $((SECONDS - t0)) s"
else
  echo "no table ($left s left)"
fi
echo "call done at $((SECONDS - t0)) s"
