#!/usr/bin/env bash
# One device call for the experimental kernel variants (REWY_EXPERIMENTS, kernels/delta/cuda/
# launch_impl.cuh), one binary: scripts/gpu-check.sh as it is (the build, its GPU tests, every
# kernel's phases at shape 0), then for each experiment set the GPU tests and phases again with
# REWY_EXPERIMENTS=SET (the last set also under the sanitizers: name every experiment there),
# into $OUT/exp<N>/, then whole ops with each set against the default (bench/compare_ours.py
# default / set: above 1 the set is faster), then whole ops with each of SWEEPS' bench_delta
# options against the default (launch choices: warps). Leaves in $OUT: gpucheck.log, phases.txt,
# exp<N>/{gpucheck.log,phases.txt}, ops_default.csv, ops_exp<N>.csv, ops_sweep<N>.csv.
#
#   device:  EXPERIMENTS='a b a,b' bash scripts/device-experiments.sh   (no carry; ~4 min + ~1 min a set)
#
# Environment: EXPERIMENTS (required: space-separated sets, each name[,name], e.g. "a b a,b"; "-"
# for none), SWEEPS ('|'-separated bench_delta options, each with optional VAR=VALUE words for
# the environment, e.g. '--prep-warps 16|REWY_EXPERIMENTS=a --bwd-slice 64'; about 20 s each),
# OPS_SHAPES (default 0,3,5), PHASE_SHAPES (the default build's phases, default 0), WAIT_FOR (a
# file: time nothing before it exists, e.g. while FLA's kernels compile beside the build and tests).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
source scripts/common.sh
out=${OUT:-out}
mkdir -p "$out"
t0=$SECONDS
[ -n "${EXPERIMENTS:-}" ] || { echo "device-experiments: set EXPERIMENTS (the names launch_impl.cuh's experiment() takes)"; exit 2; }
read -r -a sets <<<"$EXPERIMENTS"
[ "$EXPERIMENTS" = - ] && sets=()
export PHASES_WAIT_FOR=${WAIT_FOR:-}
SANITIZERS=0 BENCH=0 PHASES=1 PHASE_SHAPES=${PHASE_SHAPES:-0} bash scripts/gpu-check.sh build-gpu >"$out/gpucheck.log" 2>&1
rc=$?
tail -10 "$out/gpucheck.log"
[ $rc -eq 0 ] || { echo "device-experiments: gpu-check failed (exit $rc)"; exit $rc; }
last=$((${#sets[@]} - 1))
for n in "${!sets[@]}"; do
  mkdir -p "$out/exp$n"
  REWY_EXPERIMENTS=${sets[$n]} OUT="$out/exp$n" SASS=0 SANITIZERS=$([ "$n" = "$last" ] && echo 1 || echo 0) BENCH=0 \
    PHASES=1 PHASE_SHAPES=0 bash scripts/gpu-check.sh build-gpu >"$out/exp$n/gpucheck.log" 2>&1
  rc=$?
  echo "exp$n, REWY_EXPERIMENTS=${sets[$n]}:"
  grep -E '^\| (gpu tests|memcheck|racecheck|barrier repro|phases) ' "$out/exp$n/gpucheck.log"
  [ $rc -eq 0 ] || { echo "device-experiments: gpu-check failed with ${sets[$n]} (exit $rc)"; exit $rc; }
  # The experimental kernels time under names with _exp (grad_chunk_rewy_exp, wy_prep_overlap_exp<N>).
  grep -h "_exp.*us/call" "$out/exp$n/phases.txt"
done
echo "default:"
grep -hE "(grad_chunk_rewy|wy_prep_split|wy_prep_overlap)<(kda|gdn2).*us/call" "$out/phases.txt"
[ -n "${WAIT_FOR:-}" ] && while [ ! -e "$WAIT_FOR" ]; do sleep 2; done
rewy_ops_csv build-gpu/bench/bench_delta "$out/ops_default.csv" || exit 1
for n in "${!sets[@]}"; do
  echo "whole ops, default / REWY_EXPERIMENTS=${sets[$n]}:"
  rewy_ops_csv build-gpu/bench/bench_delta "$out/ops_exp$n.csv" REWY_EXPERIMENTS="${sets[$n]}" &&
    python3 bench/compare_ours.py "$out/ops_default.csv" "$out/ops_exp$n.csv"
done
IFS='|' read -r -a sweeps <<<"${SWEEPS:-}"
for n in "${!sweeps[@]}"; do
  echo "whole ops, default / ${sweeps[$n]}:"
  # A sweep's VAR=VALUE words (e.g. REWY_EXPERIMENTS=a,b) go to the environment, the rest to bench_delta.
  read -r -a words <<<"${sweeps[$n]}"
  envs=()
  args=()
  for w in "${words[@]}"; do if [[ $w == [A-Z]*=* ]]; then envs+=("$w"); else args+=("$w"); fi; done
  OPS_ARGS="${args[*]}" rewy_ops_csv build-gpu/bench/bench_delta "$out/ops_sweep$n.csv" "${envs[@]}" &&
    python3 bench/compare_ours.py "$out/ops_default.csv" "$out/ops_sweep$n.csv"
done
echo "device-experiments: done after $((SECONDS - t0)) s"
