#!/usr/bin/env bash
# On the GPU machine: configures with CUDA, builds with all cores, runs the gpu-labelled tests and
# the benchmarks, and prints a summary table last. Exits non-zero when any step failed (a GPU
# test that skips counts as a failure here: this machine has a GPU).
# Usage: scripts/gpu-check.sh [BUILD_DIR]   (default build-gpu)
#   PHASES=1      after the sanitizers, every kernel's time and phase cycles at shape 0
#                 (REWY_KERNEL_TIMING=2 bench_delta, all ops, Recompute) into $OUT/phases.txt;
#                 PHASE_SHAPES=0,3,5 adds $OUT/phases_s3.txt, ..., PHASE_POLICIES=recompute,save
#   AB_SRC=DIR    a second source tree to time beside this one in the same call, e.g. a base
#                 commit: `git archive OLD | tar -x -C build-ab/src` here, carried to the GPU
#                 machine (git-ignored under /build*/). Its bench_delta builds into AB_SRC/../build
#                 alongside this build; with PHASES=1 it is timed too ($OUT/phases_base.txt) and
#                 bench/compare_phases.py prints old / new per kernel.
#   SASS=0        skip the SASS size table (a second run on an unchanged build)
#   PHASES_WAIT_FOR=FILE  time the kernels only once FILE exists (scripts/device-fresh.sh: FLA's
#                 Triton compilation runs kernels on the GPU, and timings beside it are not ours)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$REWY_ROOT"
build=${1:-build-gpu}
rows=()
failed=0

# row STEP RESULT SECONDS DETAIL
row() {
  rows+=("$(printf '| %-12s | %-6s | %7s | %s' "$1" "$2" "$3" "$4")")
  [ "$2" != FAIL ] || failed=1
}
summary() {
  echo
  echo "| step         | result | seconds | detail"
  echo "|--------------|--------|---------|-------"
  local r
  for r in "${rows[@]}"; do echo "$r"; done
  exit $failed
}

t0=$SECONDS
if [ "$REWY_HAVE_NVCC" != 1 ]; then
  row setup FAIL $((SECONDS - t0)) "no nvcc (CUDA toolkit)"
  summary
elif bash scripts/setup.sh; then
  row setup ok $((SECONDS - t0)) "$(nvcc --version | grep -o 'release [0-9.]*')"
else
  # The GPU image is offline and may hold the libraries without their Debian package names:
  # carry on and let the configure step say what is really missing.
  row setup warn $((SECONDS - t0)) "setup.sh could not install; trying the build with what is there"
fi
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$gpus" -gt 0 ] || echo "gpu-check: warning: nvidia-smi sees no GPU" >&2

ab_build=""
if [ -n "${AB_SRC:-}" ]; then
  ab_build="$(realpath -m "$AB_SRC/../build")"
  # Its own configure and build, in the background beside ours (its common.sh, its root).
  (cd "$AB_SRC" && source scripts/common.sh && rewy_configure "$ab_build" -DREWY_CUDA=ON >/dev/null &&
    rewy_build "$ab_build" bench_delta) >"$build.ab-build.log" 2>&1 &
  ab_pid=$!
fi

t0=$SECONDS
if rewy_configure "$build" -DREWY_CUDA=ON && rewy_build "$build"; then
  row build ok $((SECONDS - t0)) "$build, $REWY_JOBS jobs, $gpus GPU(s)"
else
  row build FAIL $((SECONDS - t0)) "see the compiler output above"
  summary
fi

# SASS size of the delta kernels: the chunk-parallel ones stall on instruction fetch when their
# straight-line code outgrows the SM's instruction cache (docs/perf-delta.md).
t0=$SECONDS
if [ "${SASS:-1}" != 1 ]; then
  row sass "-" 0 "SASS=0"
elif sizes=$(python3 scripts/sass.py sizes "$build" 2>/dev/null); then
  echo "$sizes" >"$build/sass-size.txt"
  row sass ok $((SECONDS - t0)) "$(echo "$sizes" | awk '$2 == "grad_chunk" && $NF + 0 > m { m = $NF + 0; w = $1 " " $3 " " $4 }
    END { printf "largest grad_chunk %s KB (%s); all: %s", m, w, f }' f="$build/sass-size.txt")"
else
  row sass "-" 0 "cuobjdump not found"
fi

t0=$SECONDS
junit="$(realpath -m "$build")/gpu-tests.xml"
ctest --test-dir "$build" -L gpu --output-on-failure --no-tests=error --output-junit "$junit"
status=$?
# The junit report's <testsuite> element carries the counts.
count() {
  tr '\n\t' '  ' 2>/dev/null <"$junit" | grep -o '<testsuite [^>]*' | grep -o " $1=\"[0-9]*\"" | grep -o '[0-9]*' || echo '?'
}
tests=$(count tests) failures=$(count failures) skipped=$(count skipped)
detail="$tests tests, $failures failed, $skipped skipped"
if [ $status -eq 0 ] && [ "$skipped" = 0 ]; then row "gpu tests" ok $((SECONDS - t0)) "$detail"
else row "gpu tests" FAIL $((SECONDS - t0)) "$detail"; fi

# Sanitizers on one small case per operator (REWY_GPU_TEST_SMALL): memcheck and racecheck
# (they run grids one at a time; the library knows them by the variables they give their child and
# runs no wy_prep beside the forward's pass: grids_side_by_side in delta_cuda.cu).
if command -v compute-sanitizer >/dev/null 2>&1 && [ "${SANITIZERS:-1}" = 1 ]; then
  for tool in memcheck racecheck; do
    t0=$SECONDS
    log="$build/sanitizer-$tool.log"
    REWY_GPU_TEST_SMALL=1 timeout "${SANITIZER_TIMEOUT:-300}" compute-sanitizer --tool "$tool" --error-exitcode 1 \
      "$build/tests/gpu_test_delta" --gtest_filter='GpuDelta.DeltaNet:GpuDelta.GDN:GpuDelta.KDA:GpuDelta.GDN2:GpuDelta.FusedChannelForward:GpuDelta.SegmentScanForward' >"$log" 2>&1
    st=$?
    summ=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
    if [ $st -eq 0 ]; then row "$tool" ok $((SECONDS - t0)) "${summ:-clean}, 4 ops (small case)"
    else row "$tool" FAIL $((SECONDS - t0)) "exit $st: ${summ:-see $log}"; fi
  done
  # Informational (never fails the check): racecheck on wy_prep's overlapped barrier pattern alone
  # (tests/repro/named_barrier_racecheck.cu: 0 = named barrier of 96, 1 = every thread at barrier
  # 1, 2 = block barriers only, the control). Hazards in 0 or 1 but not 2 are the tool's.
  t0=$SECONDS
  repro="$build/named_barrier_racecheck"
  if nvcc -gencode=arch=compute_90a,code=sm_90a -lineinfo -o "$repro" tests/repro/named_barrier_racecheck.cu \
      >"$build/repro-build.log" 2>&1; then
    detail=""
    for pattern in 0 1 2; do
      log="$build/repro-racecheck-$pattern.log"
      timeout 60 compute-sanitizer --tool racecheck "$repro" "$pattern" >"$log" 2>&1
      hz=$(grep -oE "[0-9]+ hazards? displayed" "$log" | grep -oE "^[0-9]+")  # "1 hazard displayed"
      vals=$(grep -oE "values (right|wrong)|wrong values" "$log" | head -1)
      detail+="pattern $pattern: ${hz:-?} hazards, ${vals:-no result}; "
      # Into the caller's log, not $OUT (the device returns at most 8 files from it).
      echo "--- barrier repro, pattern $pattern (racecheck, first lines):"
      grep -v '^ *$' "$log" | head -24
    done
    row "barrier repro" info $((SECONDS - t0)) "$detail"
  else
    row "barrier repro" info $((SECONDS - t0)) "did not compile: $build/repro-build.log"
  fi
else
  row sanitizers "-" 0 "compute-sanitizer not found or SANITIZERS=0"
fi

# Kernel and phase timing at shape 0 (and the AB_SRC build's, for a same-call comparison).
# PHASE_SHAPES (default 0): more shapes, one run each (a kernel's table sums over the shapes of a
# run), shape 0 into phases.txt, shape N into phases_sN.txt (the base's: phases_base*.txt).
# PHASE_POLICIES (default recompute): e.g. recompute,save to time the Save policy's passes too.
if [ "${PHASES:-0}" = 1 ]; then
  if [ -n "${PHASES_WAIT_FOR:-}" ]; then
    echo "gpu-check: waiting for $PHASES_WAIT_FOR before timing" >&2
    while [ ! -e "$PHASES_WAIT_FOR" ]; do sleep 2; done
  fi
  t0=$SECONDS
  out_dir=${OUT:-out}
  mkdir -p "$out_dir"
  phases() {  # BUILD FILE SHAPE: ok only when the run printed its kernel table (bench_delta skips without a GPU)
    REWY_KERNEL_TIMING=2 "$1/bench/bench_delta" --ops deltanet,gdn,kda,gdn2 --shapes "$3" \
      --policies "${PHASE_POLICIES:-recompute}" --gates bench --samples 3 >"$2" 2>&1 && grep -q "us/call" "$2"
  }
  phase_file() { [ "$2" = 0 ] && echo "$out_dir/$1.txt" || echo "$out_dir/$1_s$2.txt"; }  # STEM SHAPE
  IFS=, read -r -a phase_shapes <<<"${PHASE_SHAPES:-0}"
  st=ok
  detail=""
  for sh in "${phase_shapes[@]}"; do
    f=$(phase_file phases "$sh")
    if phases "$build" "$f" "$sh"; then detail="$detail $f"
    else detail="$detail no kernel timing: see $f;"; st=FAIL; fi
  done
  if [ -n "$ab_build" ]; then
    if wait "$ab_pid"; then
      for sh in "${phase_shapes[@]}"; do
        base=$(phase_file phases_base "$sh")
        if phases "$ab_build" "$base" "$sh"; then
          echo "shape $sh:"
          python3 bench/compare_phases.py "$base" "$(phase_file phases "$sh")" | sed -n '/^kernel /,/^$/p'
          detail="$detail, base: $base"
        else
          st=FAIL
          detail="$detail; the AB_SRC build did not run: see $base"
        fi
      done
    else
      st=FAIL
      detail="$detail; AB_SRC did not build: see $build.ab-build.log"
    fi
  fi
  row phases "$st" $((SECONDS - t0)) "${detail# }"
elif [ -n "$ab_build" ]; then
  wait "$ab_pid" || true
fi

# Benchmarks: the delta-rule kernels beside FLA when its package is carried (scripts/bench-vs-fla.sh
# takes OPS, SHAPES, POLICIES, GATES, FLA, ACCURACY, SAMPLES from the environment).
if [ "${BENCH:-1}" = 1 ]; then
  t0=$SECONDS
  [ -d "${FLA_DIR:-.fla}/fla" ] || export FLA=0
  if BUILD="$build" bash scripts/bench-vs-fla.sh; then row benchmarks ok $((SECONDS - t0)) "${OUT:-out}/side_by_side.txt"
  else row benchmarks FAIL $((SECONDS - t0)) "see the output above"; fi
else
  row benchmarks "-" 0 "BENCH=0"
fi

summary
