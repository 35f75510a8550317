#!/usr/bin/env bash
# Device call 3 of the thirty-fifth session (carry .fla .triton-pack): every global 16-byte store
# of frag_store_global (the state passes' ∂H⁺ and H snapshots, ∂E, E and o; grad_chunk's ∂v) as
# one st.global.v4 (st_global_v4), where the compiler had split the first of every four into four
# 4-byte stores (PTX); call 2 made the row-octet stores so. Same values: every GPU test and both
# sanitizers, the ops at shapes 0, 3, 4, 5 against call 2's (bench/compare_ours.py), the FLA
# table; each kernel's time at shape 0.
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
