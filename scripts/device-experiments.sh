#!/usr/bin/env bash
# One device call for the experimental kernel variants (REWY_EXPERIMENTS, kernels/delta/cuda/
# launch_impl.cuh): the build and its GPU tests as they are (scripts/gpu-check.sh), then the GPU
# tests and the sanitizers again with EXPERIMENTS on, every kernel's phases at shape 0 without and
# with them, and whole ops without and with them (bench_delta --csv, bench/compare_ours.py
# default / experiments: above 1 the experiments are faster). One binary: no base tree to build.
# Leaves in $OUT: gpucheck.log, exp_tests.log, phases.txt, phases_exp.txt, ops_default.csv,
# ops_exp.csv.
#
#   device:  EXPERIMENTS=onepass,triangular bash scripts/device-experiments.sh   (~4 min)
#
# Environment: EXPERIMENTS (default onepass,triangular), OPS_SHAPES (default 0,3,5).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
out=${OUT:-out}
mkdir -p "$out"
t0=$SECONDS
exps=${EXPERIMENTS:-onepass,triangular}
SANITIZERS=0 BENCH=0 PHASES=1 PHASE_SHAPES=0 bash scripts/gpu-check.sh build-gpu >"$out/gpucheck.log" 2>&1
rc=$?
tail -12 "$out/gpucheck.log"
[ $rc -eq 0 ] || { echo "device-experiments: gpu-check failed (exit $rc)"; exit $rc; }

# The GPU tests and the sanitizers with the experiments on.
{
  REWY_EXPERIMENTS=$exps ctest --test-dir build-gpu -L gpu --output-on-failure --no-tests=error
  echo "ctest exit $?"
  for tool in memcheck racecheck; do
    REWY_EXPERIMENTS=$exps REWY_GPU_TEST_SMALL=1 timeout 300 compute-sanitizer --tool $tool --error-exitcode 1 \
      build-gpu/tests/gpu_test_delta --gtest_filter='GpuDelta.DeltaNet:GpuDelta.GDN:GpuDelta.KDA:GpuDelta.GDN2' 2>&1 |
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|FAILED|PASSED" | tail -3
    echo "$tool exit ${PIPESTATUS[0]}"
  done
} >"$out/exp_tests.log" 2>&1
grep -E "tests passed|tests failed|exit|SUMMARY" "$out/exp_tests.log"
grep -q "ctest exit 0" "$out/exp_tests.log" || { echo "device-experiments: GPU tests failed with $exps"; exit 1; }

# Phases (kernel names: grad_chunk_rewy_exp<...> is the experimental kernel) and whole ops.
REWY_EXPERIMENTS=$exps REWY_KERNEL_TIMING=2 build-gpu/bench/bench_delta --ops deltanet,gdn,kda,gdn2 --shapes 0 \
  --policies recompute --gates bench --samples 3 >"$out/phases_exp.txt" 2>&1
grep -h "grad_chunk_rewy.*us/call" "$out/phases.txt" "$out/phases_exp.txt"
ops_run() {  # CSV [env]
  local csv=$1
  shift
  env "$@" timeout 150 build-gpu/bench/bench_delta --ops deltanet,gdn,kda,gdn2 --shapes "${OPS_SHAPES:-0,3,5}" \
    --policies recompute --gates bench --samples 10 --backward rewy --csv "$csv" >/dev/null 2>&1
}
ops_run "$out/ops_default.csv" && ops_run "$out/ops_exp.csv" REWY_EXPERIMENTS="$exps" &&
  python3 bench/compare_ours.py "$out/ops_default.csv" "$out/ops_exp.csv"
echo "device-experiments: done after $((SECONDS - t0)) s"
