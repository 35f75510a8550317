#!/usr/bin/env bash
# Device call 4 of the thirty-sixth session (carry .fla .triton-pack): async_tile and
# async_tile_sw128 advance each thread's source row by one add (the compiler had branched around a
# 64-bit multiply per row: 3473 -> 2279 64-bit multiplies in KDA's PTX, no new spill, state_fwd's
# 16-byte spill at BV = 64 gone). Same copies: every GPU test and both sanitizers, each kernel's
# time at shape 0, the ops and the FLA table (its ours.csv against the thirty-fifth session's call
# 3: bench/compare_ours.py).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build0.log" 300 gpu_test_delta bench_delta delta_accuracy rewy || { tail -5 "$out/build0.log"; exit 1; }
echo "built at $((SECONDS - t0)) s"
REWY_KERNEL_TIMING=1 timeout 90 build-gpu/bench/bench_delta --ops deltanet,gdn,kda,gdn2 --shapes 0 --policies recompute \
  --gates bench --backward rewy --samples 3 >"$out/kernels_shape0.txt" 2>&1
echo "kernel timing exit $? at $((SECONDS - t0)) s"; grep -E "us/call" "$out/kernels_shape0.txt" | cut -c1-110
DEFAULT_TESTS=1 VARIANTS=deltanet,gdn,kda,gdn2 LIMIT_S=$((575 - (SECONDS - t0))) \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -40
[ -f /tmp/dd/table/ours.csv ] && python3 bench/compare_ours.py docs/measurements/2026-12-03-s35/call3/table/ours.csv /tmp/dd/table/ours.csv
echo "call done at $((SECONDS - t0)) s"
