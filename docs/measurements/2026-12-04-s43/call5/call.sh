#!/usr/bin/env bash
# Device call 5 of the forty-third session (the session's last device time, about 290 s): the
# unfused Recompute forward of DeltaNet and GDN keeping 𝒯 Diag(β) and GDN's row gates from its
# wy_prep where the backward's replay is fused (call 4's lever): the new GPU test, DeltaNet's and
# GDN's GPU tests, then (1, 16384, 16) timed as in call 4 and its phases (no wy_replay_tb).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 215 gpu_test_delta bench_delta
echo "build exit $? at $((SECONDS - t0)) s"
t=build-gpu/tests/gpu_test_delta
timeout 60 $t --gtest_filter='GpuDelta.UnfusedForwardKeepsTbetaForReplay:GpuDelta.DeltaNet:GpuDelta.GDN' >"$out/tests.log" 2>&1
echo "tests exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[       OK|^\[  FAILED' "$out/tests.log" | tr '\n' ' ')"
grep -E "automatic slices|Failure|above 2x" "$out/tests.log" | head -8
b=build-gpu/bench/bench_delta
timeout 30 $b --ops deltanet,gdn --shapes 3 --policies recompute --gates bench --backward rewy --samples 20 \
  --csv "$out/ss_auto.csv" >/dev/null 2>&1
echo "ops exit $? at $((SECONDS - t0)) s"; grep -E "^(deltanet|gdn)," "$out/ss_auto.csv" | cut -d, -f1,8,10,11
REWY_KERNEL_TIMING=2 timeout 30 $b --ops deltanet,gdn --shapes 3 --policies recompute --gates bench --backward rewy \
  --samples 3 >"$out/phases.txt" 2>&1
grep -E "us/call" "$out/phases.txt" | cut -c1-110
cd "$out" && tar -czf all.tar.gz tests.log ss_auto.csv phases.txt build.log && rm -f tests.log ss_auto.csv phases.txt build.log
echo "call done at $((SECONDS - t0)) s"
