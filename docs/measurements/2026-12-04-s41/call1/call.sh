#!/usr/bin/env bash
# Device call 1 of the forty-first session (carry .fla .triton-pack). Experiments on the Recompute
# forward's output pass: `kh` (DeltaNet's and GDN's fused pass forms E = 𝒯 Diag(β) (V − Γ ⊙ K H),
# no W), `hend` (every variant: Hᵀ stored at a step's end, one block barrier a step fewer), and
# both. GPU tests of each set (sanitizers on the pair), forward ops at all six shapes against the
# defaults (picked by the forward), no FLA table; then the beside test and phases with the pair.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
VARIANTS=deltanet,gdn,kda,gdn2 SETS='kh,hend@deltanet,gdn kh@deltanet,gdn hend' NOSAN='kh hend' PICK_DIRECTION=fwd \
  OPS_BACKWARD=rewy OPS_SHAPES=0,1,2,3,4,5 TABLE=0 LIMIT_S=520 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -60
REWY_EXPERIMENTS=kh,hend timeout 40 build-gpu/tests/gpu_test_delta --gtest_filter='GpuDelta.PrepBeside*' 2>&1 | tail -4
REWY_EXPERIMENTS=kh,hend REWY_KERNEL_TIMING=2 timeout 40 build-gpu/bench/bench_delta --ops deltanet,gdn --shapes 0,5 \
  --policies recompute --gates bench --backward rewy --samples 3 2>&1 | grep -E "state_fwd_out" | cut -c1-200
REWY_KERNEL_TIMING=2 timeout 40 build-gpu/bench/bench_delta --ops deltanet,gdn --shapes 0,5 \
  --policies recompute --gates bench --backward rewy --samples 3 2>&1 | grep -E "state_fwd_out" | cut -c1-200
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
