#!/usr/bin/env bash
# Device call 3 of the fifty-sixth session (carry .prebuilt .fla .triton-pack): experiment dkstate
# (DeltaNet's ∂K̄ state term E ∂H⁺ᵀ formed by state_bwd after the replay, read by grad_chunk in
# place of ∂H⁺): DeltaNet's GPU tests and both sanitizers under it, its Recompute ops against the
# defaults at shapes 0, 1, 4 (device-decide, no FLA table); then each kernel alone at shapes 0 and 4
# with and without it, and Nsight Compute's DRAM bytes of its backward at shape 4.
# Not run in the fifty-sixth session (no machine lent after call 2): the next session's first call.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
SETS='dkstate@deltanet' VARIANTS=deltanet OPS_SHAPES=0,1,4 OPS_BACKWARD=rewy TABLE=0 LIMIT_S=400 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)|cycles:|us/call" /tmp/dd/decide.log | tail -30
rewy_device_build /tmp/rebuild.log 30 gpu_test_delta bench_delta >/dev/null  # (the pack's libraries on LD_LIBRARY_PATH)
b=build-gpu/bench/bench_delta
for e in "" dkstate; do
  [ $((SECONDS - t0)) -lt 480 ] || break
  REWY_EXPERIMENTS=$e REWY_KERNEL_TIMING=1 timeout 40 $b --ops deltanet --shapes 0,4 --policies recompute --gates bench \
    --backward rewy --samples 5 >"$out/kernels_${e:-default}.txt" 2>&1
  echo "== kernels ${e:-default}"; grep -E "us/call|median_ms" "$out/kernels_${e:-default}.txt" | grep -E "bwd|state_bwd|grad_chunk|replay" | cut -c1-140
done
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics=$metrics,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed
metrics=$metrics,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.per_cycle_active
: >"$out/ncu.csv"
for e in default dkstate; do
  left=$((560 - (SECONDS - t0)))
  [ $left -ge 40 ] || { echo "ncu $e skipped"; continue; }
  REWY_EXPERIMENTS=$([ $e = dkstate ] && echo dkstate) timeout $((left - 10)) ncu --clock-control none \
    --kernel-name regex:"state_|grad_chunk" --metrics "$metrics" --csv \
    $b --ops deltanet --shapes 4 --policies recompute --gates bench --backward rewy --samples 1 2>/dev/null |
    grep '^"' | sed "s/^/\"deltanet-$e\",\"4\",/" >>"$out/ncu.csv"
  echo "ncu $e exit ${PIPESTATUS[0]} at $((SECONDS - t0)) s"
done
python3 bench/ncu_summary.py "$out/ncu.csv" 2>&1 | tee "$out/ncu_summary.txt"
gzip -9 "$out/ncu.csv"
echo "call done at $((SECONDS - t0)) s"
