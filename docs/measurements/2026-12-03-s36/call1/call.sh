#!/usr/bin/env bash
# Device call 1 of the thirty-sixth session (carry .fla .triton-pack): experiment `persist` (KDA's
# ReWY grad_chunk at K = V = 128 on a persistent grid of one CTA an SM that loads each next item's
# tiles behind the current one; chunk_bwd.cuh, kPersist). First the walk itself with a grid capped
# at 3 CTAs (REWY_TEST_GRAD_CTAS: every CTA walks many items at the tests' sizes): KDA's GPU tests,
# the overlapped-against-serial and stall tests, both sanitizers at 2 CTAs; then each kernel's
# time at shape 0 with and without it; then scripts/device-decide.sh on the set (its tests
# uncapped, sanitizers, ops at the six shapes against the defaults), no table; a by-line profile
# of the default grad_chunk<kda> if time is left.
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
  REWY_EXPERIMENTS=$e REWY_KERNEL_TIMING=1 timeout 60 build-gpu/bench/bench_delta --ops kda --shapes 0 --policies recompute \
    --gates bench --backward rewy --samples 3 >"$out/kernels_shape0_$e.txt" 2>&1
  echo "kernels ($e) exit $? at $((SECONDS - t0)) s"; grep -E "grad_chunk.*us/call" "$out/kernels_shape0_$e.txt" | cut -c1-110
done
SETS='persist@kda' VARIANTS=kda OPS_SHAPES=0,1,2,3,4,5 OPS_BACKWARD=rewy TABLE=0 LIMIT_S=$((480 - (SECONDS - t0))) \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -30
if [ $((SECONDS - t0)) -lt 500 ]; then
  KERNEL=grad_chunk_kernel OP=kda DIRECTION=bwd LINES=30 OUT="$out" timeout $((585 - (SECONDS - t0))) bash scripts/profile-source.sh >"$out/profile.txt" 2>&1
  echo "profile exit $? at $((SECONDS - t0)) s"
  obj=build-gpu/kernels/CMakeFiles/rewy_kernels.dir/delta/cuda/variant_kda.cu.o
  ls "$out"/source_*.csv.gz >/dev/null 2>&1 && timeout 30 python3 scripts/sass_lines.py "$out"/source_*.csv.gz 40 --obj $obj \
    --kernel 'grad_chunk_kernelILi2ELi128ELi128ELb1ELi512ELi27E' >"$out/profile_lines.txt" 2>&1
  head -60 "$out/profile_lines.txt" 2>/dev/null
fi
echo "call done at $((SECONDS - t0)) s"
