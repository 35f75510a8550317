#!/usr/bin/env bash
# Device call prepared in the fifty-seventh session (carry .prebuilt .fla .triton-pack; commit
# 6e7790a's sources; no machine was lent that session): experiments pform (DeltaNet and GDN),
# pformb and dkstate (DeltaNet), each against the defaults in one call.
# - pform: the forward's fused pass by column halves forms P = tril(Q Kᵀ) (GDN: times
#   e^{G_i − G_j}, G from wy_prep) from its q and k tiles, each warpgroup beside K H and Q H, P E
#   from registers, and stores P for the backward; wy_prep then reads no q and writes no P. Also
#   in the two-pass form's planes and the decay cut's pass (shape 3), not beside wy_prep (2, 5).
# - pformb: the same beside wy_prep (DeltaNet's shapes 2 and 5: the pass at slices of 64, unhalved;
#   wy_prep's shared kernel without P). No sanitizers (NOSAN): they run no grid beside another, so
#   they would see only the default kernels.
# - dkstate (the fifty-sixth session's, not yet run): ∂K̄'s state term E ∂H⁺ᵀ formed by state_bwd
#   after the replay, read by grad_chunk in place of ∂H⁺.
# Each: its variants' GPU tests and both sanitizers under it, their Recompute ops against the
# defaults at the six shapes (device-decide, no FLA table); then each kernel alone at shapes 0 and
# 4 with and without it; Nsight Compute's DRAM bytes at shape 4 while time is left.
# CALL_SETS, CALL_LIMIT_S, CALL_SETS_UNTIL_S, CALL_KERNELS_UNTIL_S, CALL_NCU_UNTIL_S trim it to the
# device time left.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
SETS=${CALL_SETS:-'pform@deltanet,gdn pformb@deltanet dkstate@deltanet'} NOSAN=${NOSAN:-pformb} VARIANTS=deltanet,gdn \
  OPS_SHAPES=0,1,2,3,4,5 OPS_BACKWARD=rewy TABLE=0 LIMIT_S=${CALL_LIMIT_S:-440} SETS_UNTIL_S=${CALL_SETS_UNTIL_S:-340} \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)|cycles:|us/call" /tmp/dd/decide.log | tail -45
rewy_device_build /tmp/rebuild.log 30 gpu_test_delta bench_delta >/dev/null  # (the pack's libraries on LD_LIBRARY_PATH)
b=build-gpu/bench/bench_delta
for e in "" pform pformb dkstate; do
  [ $((SECONDS - t0)) -lt ${CALL_KERNELS_UNTIL_S:-470} ] || break
  ops=$([ "$e" = dkstate ] || [ "$e" = pformb ] && echo deltanet || echo deltanet,gdn)
  shapes=$([ "$e" = pformb ] && echo 2,5 || echo 0,4)
  REWY_EXPERIMENTS=$e REWY_KERNEL_TIMING=1 timeout 40 $b --ops $ops --shapes $shapes --policies recompute --gates bench \
    --backward rewy --samples 5 >"$out/kernels_${e:-default}.txt" 2>&1
  echo "== kernels ${e:-default}"; grep -E "us/call" "$out/kernels_${e:-default}.txt" | cut -c1-140
done
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics=$metrics,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed
metrics=$metrics,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.per_cycle_active
: >"$out/ncu.csv"
for e in default pform; do
  left=$((${CALL_NCU_UNTIL_S:-550} - (SECONDS - t0)))
  [ $left -ge 40 ] || { echo "ncu $e skipped"; continue; }
  REWY_EXPERIMENTS=$([ $e = default ] || echo $e) timeout $((left - 10)) ncu --clock-control none \
    --kernel-name regex:"state_fwd|wy_prep" --metrics "$metrics" --csv \
    $b --ops deltanet,gdn --shapes 4 --policies recompute --gates bench --backward rewy --samples 1 2>/dev/null |
    grep '^"' | sed "s/^/\"fwd-$e\",\"4\",/" >>"$out/ncu.csv"
  echo "ncu $e exit ${PIPESTATUS[0]} at $((SECONDS - t0)) s"
done
[ -s "$out/ncu.csv" ] && python3 bench/ncu_summary.py "$out/ncu.csv" 2>&1 | tee "$out/ncu_summary.txt"
gzip -9 "$out/ncu.csv"
echo "call done at $((SECONDS - t0)) s"
