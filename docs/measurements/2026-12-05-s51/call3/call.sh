#!/usr/bin/env bash
# Device call 3 of the fifty-first session's plan, prepared (carry .fla .triton-pack): KDA's and
# GDN2's few-pair Recompute forward by the two-pass form (experiment kseg2p: wy_prep_split in the
# fused mode, K ⊙ Γ and 𝒯 Diag(β) for KDA, Y_W and Y_U for GDN2, the plane pass in their fused
# form, the scan, the correction; at up to 32 pairs) against the default (the pass beside
# wy_prep_split) at shapes 2, 3, 5; their tests (ChannelGateTwoPassForward runs their two-pass
# form at 2, 3, 5 segments) and both sanitizers under it; their FLA table with it where it wins (judged by the
# forward), then the kernels at shape 3.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
OPS=kda,gdn2 VARIANTS=kda,gdn2 SETS='kseg2p@kda,gdn2' PICK_DIRECTION=fwd OPS_SHAPES=2,3,5 OPS_BACKWARD=rewy \
  LIMIT_S=530 SETS_UNTIL_S=300 bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -30
grep -hE "^(kda|gdn2) .*two passes" /tmp/dd/tests_kseg2p.log 2>/dev/null | head -24
[ -f /tmp/dd/table/side_by_side.txt ] && grep -E "^==|^kda|^gdn2" /tmp/dd/table/side_by_side.txt | head -40
if [ $((SECONDS - t0)) -lt 540 ]; then
  REWY_EXPERIMENTS=kseg2p REWY_KERNEL_TIMING=1 timeout 20 build-gpu/bench/bench_delta --ops kda,gdn2 --shapes 3 \
    --policies recompute --gates bench --samples 3 --backward rewy 2>&1 | grep -E "us/call|fwd/" | grep -vE "grad_chunk|state_bwd|replay" | cut -c1-150
fi
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
