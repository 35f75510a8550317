#!/usr/bin/env bash
# Fresh machine to tested rewy: installs what is missing, builds everything (Release; CUDA when
# nvcc exists), runs every test (GPU tests report skipped without a GPU), then rebuilds the CPU
# code with ASan + UBSan and runs the cpu-labelled tests under them.
# REWY_SANITIZE_TESTS=0 skips the sanitizer pass.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

bash "$REWY_ROOT/scripts/setup.sh"
cd "$REWY_ROOT"

rewy_step "configure" rewy_configure build
rewy_step "build" rewy_build build
rewy_step "tests" ctest --test-dir build --output-on-failure --no-tests=error -j "$REWY_JOBS"

if [ "${REWY_SANITIZE_TESTS:-1}" != 0 ]; then
  # Sanitizers instrument host code only, so this build is CPU-only; -O1 keeps the tests quick.
  rewy_step "sanitize: configure" rewy_configure build-sanitize -DREWY_CUDA=OFF -DREWY_SANITIZE=ON \
    -DREWY_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g"
  rewy_step "sanitize: build" rewy_build build-sanitize
  rewy_step "sanitize: cpu tests" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-sanitize -L cpu --output-on-failure --no-tests=error -j "$REWY_JOBS"
fi
rewy_summary
