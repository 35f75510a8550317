#!/usr/bin/env bash
# Device call 3 of the thirty-sixth session (carry .fla .triton-pack): experiment `persist`, third
# form: the next item's ∂O, q and 𝒯 load during phase 4 (no other global traffic there) and the
# first barrier waits for G and H alone, its gate scan unrolled (call 2: G, q in phase 5, H at the ∂g
# scan's barrier slowed those phases as much as the first barrier gained). The walk at 3 CTAs (tests)
# and 2 (sanitizers); each kernel's time and grad_chunk's phases at shape 0 with and without it;
# scripts/device-decide.sh on the set (tests, sanitizers, ops at the six shapes); the FLA table
# with the set where it won.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build0.log" 300 gpu_test_delta bench_delta delta_accuracy rewy || { tail -5 "$out/build0.log"; exit 1; }
echo "built at $((SECONDS - t0)) s"
walk='GpuDelta.KDA:GpuDelta.OverlappedBackwardMatchesSerial:GpuDelta.StalledPassesRaiseInsteadOfHanging:GpuDelta.ChannelGatesRealisticAndOutOfRange:GpuDelta.MisalignedInputViews'
REWY_EXPERIMENTS=persist:kda REWY_TEST_GRAD_CTAS=3 timeout 150 build-gpu/tests/gpu_test_delta --gtest_filter="$walk" \
  >"$out/tests_walk3.log" 2>&1
echo "walk tests (3 CTAs) exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|SKIPPED \]' "$out/tests_walk3.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which|error" "$out/tests_walk3.log" | head -20
for tool in memcheck racecheck; do
  REWY_EXPERIMENTS=persist:kda REWY_TEST_GRAD_CTAS=2 REWY_GPU_TEST_SMALL=1 timeout 90 compute-sanitizer --tool $tool \
    --error-exitcode 1 build-gpu/tests/gpu_test_delta --gtest_filter=GpuDelta.KDA >"$out/san_walk_$tool.txt" 2>&1
  echo "walk $tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_walk_$tool.txt" | tail -1)"
  grep -hE "Error|Race" "$out/san_walk_$tool.txt" | head -5
done
for e in none persist:kda; do
  for t in 1 2; do
    REWY_EXPERIMENTS=$e REWY_KERNEL_TIMING=$t timeout 60 build-gpu/bench/bench_delta --ops kda --shapes 0 --policies recompute \
      --gates bench --backward rewy --samples 3 >"$out/kernels${t}_shape0_$e.txt" 2>&1
    echo "kernels$t ($e) exit $? at $((SECONDS - t0)) s"; grep -E "grad_chunk.*(us/call|cycles)" "$out/kernels${t}_shape0_$e.txt" | cut -c1-250
  done
done
SETS='persist@kda' VARIANTS=kda OPS_SHAPES=0,1,2,3,4,5 OPS_BACKWARD=rewy TABLE=0 LIMIT_S=$((300 - (SECONDS - t0))) \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -16
exps=$(tail -n 1 /tmp/dd/pick.txt 2>/dev/null)
if [ -n "$exps" ]; then
  mkdir -p "$out/table"
  rewy_fla_table "$out/table" $((585 - (SECONDS - t0))) REWY_EXPERIMENTS="$exps"
  echo "table exit $? at $((SECONDS - t0)) s"
fi
echo "call done at $((SECONDS - t0)) s"
