#!/usr/bin/env bash
# Device call 4 of the forty-third session: DeltaNet and GDN at (1, 16384, 16), the one benchmark
# shape whose forward runs V-slices of 32 (the beside rule's cap of 64 CTAs; 16 pairs), so its
# pass is the unfused one (W and U from wy_prep) and the Recompute forward keeps no 𝒯 Diag(β)
# (the backward runs wy_replay_tb). Whole ops, Recompute, ReWY backward, at --state-slice 0
# (automatic: 32), 64 and 128, the automatic run again at the end (the call's spread); then the
# phases at 0 and 64. No kernel changes: every path met here is the GPU tests'.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 300 bench_delta
echo "build exit $? at $((SECONDS - t0)) s"
b=build-gpu/bench/bench_delta
run() {  # run NAME SLICE
  timeout 60 $b --ops deltanet,gdn --shapes 3 --policies recompute --gates bench --backward rewy --samples 20 \
    --state-slice "$2" --csv "$out/ss_$1.csv" >/dev/null 2>&1
  echo "$1 (slice $2) exit $? at $((SECONDS - t0)) s"
}
run auto 0; run s64 64; run s128 128; run auto2 0; run s64b 64
for f in "$out"/ss_*.csv; do echo "== $(basename "$f")"; grep -E "^(deltanet|gdn)," "$f" | cut -d, -f1,8,10,11; done
for ss in 0 64; do
  REWY_KERNEL_TIMING=2 timeout 60 $b --ops deltanet,gdn --shapes 3 --policies recompute --gates bench --backward rewy \
    --samples 3 --state-slice $ss >"$out/phases_$ss.txt" 2>&1
  echo "== phases at slice $ss"; grep -E "us/call" "$out/phases_$ss.txt" | cut -c1-110
done
cd "$out" && tar -czf all.tar.gz ss_*.csv phases_*.txt build.log && rm -f ss_*.csv phases_*.txt build.log
echo "call done at $((SECONDS - t0)) s"
