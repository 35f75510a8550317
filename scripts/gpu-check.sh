#!/usr/bin/env bash
# On the GPU machine: configures with CUDA, builds with all cores, runs the gpu-labelled tests and
# the benchmarks, and prints a summary table last. Exits non-zero when any step failed (a GPU
# test that skips counts as a failure here: this machine has a GPU).
# Usage: scripts/gpu-check.sh [BUILD_DIR]   (default build-gpu)
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
if bash scripts/setup.sh && [ "$REWY_HAVE_NVCC" = 1 ]; then
  row setup ok $((SECONDS - t0)) "$(nvcc --version | grep -o 'release [0-9.]*')"
else
  row setup FAIL $((SECONDS - t0)) "missing packages or no nvcc (CUDA toolkit)"
  summary
fi
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$gpus" -gt 0 ] || echo "gpu-check: warning: nvidia-smi sees no GPU" >&2

t0=$SECONDS
if rewy_configure "$build" -DREWY_CUDA=ON && rewy_build "$build"; then
  row build ok $((SECONDS - t0)) "$build, $REWY_JOBS jobs, $gpus GPU(s)"
else
  row build FAIL $((SECONDS - t0)) "see the compiler output above"
  summary
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

# ---------------------------------------------------------------------------------------------
# Benchmarks: to be added with the benchmark suite (run bench/bench_* here, add one row each).
# ---------------------------------------------------------------------------------------------
row benchmarks "-" 0 "not yet part of this script"

summary
