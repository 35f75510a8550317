#!/usr/bin/env bash
# The shortest device call that can decide an experiment (about 215 s on a fresh machine, so it
# fits a session's last 5 minutes): build gpu_test_delta and bench_delta alone (no CPU tests, no
# sanitizers), run the GPU tests of the variants named with REWY_EXPERIMENTS set, then those
# variants' whole ops (both policies, rewy backward) at OPS_SHAPES, default against the experiment
# (bench/compare_ours.py: above 1 the experiment is faster), and their phases at shape 0 both ways.
# Leaves in $OUT: build.log, tests.log, ops_default.csv, ops_exp.csv, phases_default.txt, phases_exp.txt.
# Exit 3 where the GPU tests skipped (no device).
#
#   device:  EXPERIMENT=name OPS=kda bash scripts/device-quick.sh   (no carry)
#
# Environment: EXPERIMENT (required: REWY_EXPERIMENTS for the experiment's runs), OPS (default kda;
# comma-separated deltanet, gdn, kda, gdn2), OPS_SHAPES (default 0,3,4,5), TESTS (a gtest filter;
# default the variants' GpuDelta tests plus ChannelGatesRealisticAndOutOfRange and
# MisalignedInputViews), BUILD_S (the build's time limit, default 255 s).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
source scripts/common.sh
out=${OUT:-out}
mkdir -p "$out"
t0=$SECONDS
[ -n "${EXPERIMENT:-}" ] || { echo "device-quick: set EXPERIMENT (the REWY_EXPERIMENTS value to test)"; exit 2; }
ops=${OPS:-kda}
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" "${BUILD_S:-255}" gpu_test_delta bench_delta
rc=$?
echo "device-quick: build exit $rc at $((SECONDS - t0)) s"
[ $rc -eq 0 ] || { tail -20 "$out/build.log"; exit $rc; }
filter=${TESTS:-$(rewy_gpu_test_filter "$ops" cases)}
REWY_EXPERIMENTS=$EXPERIMENT timeout 120 build-gpu/tests/gpu_test_delta --gtest_filter="$filter" >"$out/tests.log" 2>&1
rc=$?
echo "device-quick: tests ($filter) with REWY_EXPERIMENTS=$EXPERIMENT exit $rc at $((SECONDS - t0)) s"
grep -E "^\[ +(OK|FAILED|PASSED) +\]" "$out/tests.log"
[ $rc -eq 0 ] || exit $rc
if grep -q "^\[  SKIPPED \]" "$out/tests.log"; then echo "device-quick: the GPU tests skipped (no device): nothing was tested"; exit 3; fi
bench=build-gpu/bench/bench_delta
export OPS_VARIANTS=$ops OPS_SHAPES=${OPS_SHAPES:-0,3,4,5} OPS_POLICIES=recompute,save OPS_BACKWARD=rewy
rewy_ops_csv "$bench" "$out/ops_default.csv" && rewy_ops_csv "$bench" "$out/ops_exp.csv" REWY_EXPERIMENTS="$EXPERIMENT" &&
  python3 bench/compare_ours.py "$out/ops_default.csv" "$out/ops_exp.csv"
for run in default exp; do
  exp=""
  [ $run = exp ] && exp=$EXPERIMENT
  REWY_EXPERIMENTS=$exp REWY_KERNEL_TIMING=2 timeout 60 "$bench" --ops "$ops" --shapes 0 --policies recompute --gates bench \
    --samples 3 >"$out/phases_$run.txt" 2>&1
done
echo "device-quick: done at $((SECONDS - t0)) s"
