#!/usr/bin/env bash
# Device call 1 of the thirty-seventh session (carry .fla; no .triton-pack: FLA compiles beside the
# build and tests, FLA_COMPILE=1, and its kernels come back as triton-cache.tar.xz.NN). Experiment
# `eform`: the ReWY grad_chunk at K = V = 128 forming ∂A = −stril(R_U Eᵀ) (the E-system's form:
# R_W Wᵀ + R_U Uᵀ = R_U (U − WH)ᵀ since R_W = −R_U Hᵀ) for every variant: one C×V×C product in
# place of two, W and U never loaded, R_W never stored, E kept in S3 from phase 1 (chunk_bwd.cuh,
# kEForm; EXP + 100). scripts/device-decide.sh on the set (its GPU tests and sanitizers, ops at
# shapes 0, 3, 4, 5 against the defaults after FLA's compile), no table; then each kernel's time at
# shape 0 with and without it.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
FLA_COMPILE=1 TABLE=0 VARIANTS=deltanet,gdn,kda,gdn2 SETS='eform' LIMIT_S=520 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -45
mkdir -p /tmp/kt
for e in none eform; do
  [ $((SECONDS - t0)) -lt 560 ] || break
  REWY_EXPERIMENTS=$e REWY_KERNEL_TIMING=2 timeout 40 build-gpu/bench/bench_delta --ops deltanet,gdn,kda,gdn2 --shapes 0 \
    --policies recompute --gates bench --backward rewy --samples 3 >"/tmp/kt/kernels_shape0_$e.txt" 2>&1
  echo "kernel timing $e exit $? at $((SECONDS - t0)) s"; grep -E "grad_chunk.*(us/call|cycles)" "/tmp/kt/kernels_shape0_$e.txt" | cut -c1-200
done
(cd /tmp/kt && tar -czf "$OLDPWD/$out/kernels.tar.gz" .)
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
