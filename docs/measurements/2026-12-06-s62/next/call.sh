#!/usr/bin/env bash
# Prepared in the sixty-second session for the next one's first call (carry .prebuilt; about 60 s
# from the pack): where the forward pass's step grows beside wy_prep (2.05-2.1 us against 1.71
# alone at (2, 8192, 16), call 3 and call 5 of that session). REWY_BESIDE_CLOCK=1 now also gives
# the pass's phases beside wy_prep (SM cycles a CTA and step: stage wait, Hᵀ Kᵀ, E, the update
# and O), and REWY_KERNEL_TIMING=2 the same phases with the pass alone (there summed over a pair's
# V-slices: divide DeltaNet's at slices of 64 by 2). DeltaNet, KDA, GDN2 at shapes 2 and 5.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
b=build-gpu/bench/bench_delta
for sh in 2 5; do
  REWY_KERNEL_TIMING=2 timeout 60 $b --ops deltanet,kda,gdn2 --shapes $sh --policies recompute --gates bench --backward rewy \
    --samples 5 --benchmark_filter=fwd >"$out/alone$sh.txt" 2>&1
  echo "== alone, shape $sh:"; grep -E "state_fwd.*(cycles:|us/call)" "$out/alone$sh.txt" | cut -c1-160
done
REWY_BESIDE_CLOCK=1 timeout 60 $b --ops deltanet,kda,gdn2 --shapes 2,5 --policies recompute --gates bench --backward rewy \
  --samples 5 --benchmark_filter=fwd >"$out/beside.txt" 2>&1
echo "== beside:"; grep "beside clock" "$out/beside.txt" | awk '{k=$3" "$4" "$5" "$6; last[k]=$0} END {for (k in last) print last[k]}' | sort | cut -c14-400
(cd "$out" && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz all.tar.gz)
echo "call done at $((SECONDS - t0)) s"
