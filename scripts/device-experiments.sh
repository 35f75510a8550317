#!/usr/bin/env bash
# One device call for the experimental kernel variants (REWY_EXPERIMENTS, kernels/delta/cuda/
# launch_impl.cuh), one binary: scripts/gpu-check.sh as it is (the build, its GPU tests, every
# kernel's phases at shape 0), then again with EXPERIMENTS on (the GPU tests, the sanitizers and
# the phases, into $OUT/exp/), then whole ops without and with them (bench/compare_ours.py default
# / experiments: above 1 the experiments are faster). Leaves in $OUT: gpucheck.log, phases.txt,
# exp/gpucheck.log, exp/phases.txt, ops_default.csv, ops_exp.csv.
#
#   device:  bash scripts/device-experiments.sh   (no carry; ~5 min)
#
# Environment: EXPERIMENTS (default onepass,triangular), OPS_SHAPES (default 0,3,5).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
source scripts/common.sh
out=${OUT:-out}
mkdir -p "$out/exp"
t0=$SECONDS
exps=${EXPERIMENTS:-onepass,triangular}
SANITIZERS=0 BENCH=0 PHASES=1 PHASE_SHAPES=0 bash scripts/gpu-check.sh build-gpu >"$out/gpucheck.log" 2>&1
rc=$?
tail -10 "$out/gpucheck.log"
[ $rc -eq 0 ] || { echo "device-experiments: gpu-check failed (exit $rc)"; exit $rc; }
REWY_EXPERIMENTS=$exps OUT="$out/exp" SANITIZERS=1 BENCH=0 PHASES=1 PHASE_SHAPES=0 \
  bash scripts/gpu-check.sh build-gpu >"$out/exp/gpucheck.log" 2>&1
rc=$?
echo "with REWY_EXPERIMENTS=$exps:"
tail -10 "$out/exp/gpucheck.log"
[ $rc -eq 0 ] || { echo "device-experiments: gpu-check failed with $exps (exit $rc)"; exit $rc; }
# (The experimental kernels time as grad_chunk_rewy_exp<...>.)
grep -h "grad_chunk_rewy.*us/call" "$out/phases.txt" "$out/exp/phases.txt"
rewy_ops_csv build-gpu/bench/bench_delta "$out/ops_default.csv" &&
  rewy_ops_csv build-gpu/bench/bench_delta "$out/ops_exp.csv" REWY_EXPERIMENTS="$exps" &&
  python3 bench/compare_ours.py "$out/ops_default.csv" "$out/ops_exp.csv"
echo "device-experiments: done after $((SECONDS - t0)) s"
