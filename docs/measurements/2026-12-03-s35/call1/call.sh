#!/usr/bin/env bash
# Device call 1 of the thirty-fifth session (carry .fla .triton-pack): HEAD's defaults on the
# device (d1ca177's test change, never run there, and the slice rule counting the device's SMs
# instead of a constant 132: the same widths on an H200). Every GPU test and both sanitizers, the
# FLA table; then Nsight Compute on KDA's grad_chunk and wy_prep_split at shape 0 (the kernels the
# next structural steps rewrite: their stall reasons by SASS line, for NOTES.md).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build0.log" 300 gpu_test_delta bench_delta delta_accuracy rewy || { tail -5 "$out/build0.log"; exit 1; }
echo "built at $((SECONDS - t0)) s"
DEFAULT_TESTS=1 VARIANTS=deltanet,gdn,kda,gdn2 LIMIT_S=$((470 - (SECONDS - t0))) \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -40
# Nsight Compute: one launch of each kernel after two warm ones, full set, SASS-level sources.
prof=/tmp/ncu; mkdir -p $prof
for k in grad_chunk wy_prep_split; do
  left=$((585 - (SECONDS - t0)))
  [ $left -ge 50 ] || { echo "ncu $k: skipped, $left s left"; continue; }
  timeout $((left - 10)) ncu -k "regex:$k" --launch-skip 2 --launch-count 1 --set full --import-source yes -f -o $prof/$k \
    build-gpu/bench/bench_delta --ops kda --shapes 0 --policies recompute --gates bench --backward rewy --samples 1 \
    >$prof/${k}_run.log 2>&1
  echo "ncu $k exit $? at $((SECONDS - t0)) s"
  ncu -i $prof/$k.ncu-rep --page details >$prof/${k}_details.txt 2>&1
  ncu -i $prof/$k.ncu-rep --page source --csv --print-source sass >$prof/${k}_sass.csv 2>&1
  head -c 4000 $prof/${k}_details.txt | head -60
done
tar -cJf "$out/ncu.tar.xz" -C $prof . 2>/dev/null; ls -la "$out"
