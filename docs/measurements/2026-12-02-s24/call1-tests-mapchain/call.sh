#!/usr/bin/env bash
# s24 call 1: every GPU test (incl. map chain split_output, 5cb1de4, 49d8fde), then map chain vs output pass
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
SANITIZERS=0 BENCH=0 PHASES=0 SASS=0 bash scripts/gpu-check.sh build-gpu >"$out/gpucheck.log" 2>&1; rc=$?
tail -8 "$out/gpucheck.log"; echo "gpu-check rc $rc at $((SECONDS-t0)) s"
source scripts/common.sh; rewy_build build-gpu bench_map_chain bench_delta >/dev/null 2>&1
{
build-gpu/tests/gpu_test_map_chain 2>&1 | tail -4
for sp in "" "--split-output"; do
  build-gpu/bench/bench_map_chain --shapes 2,3,5 --slices 16,32,64 --samples 15 $sp 2>&1 | grep -E "median|ms"
done
REWY_KERNEL_TIMING=1 build-gpu/bench/bench_delta --ops deltanet,gdn --shapes 2,3,5 --policies recompute --backward rewy --gates bench --samples 5 --benchmark_filter=/fwd/ 2>&1 | grep -E "median|us/call"
} >"$out/mapchain.txt" 2>&1
cat "$out/mapchain.txt" | cut -c1-180
echo "done at $((SECONDS-t0)) s"
