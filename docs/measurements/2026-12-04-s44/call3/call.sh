#!/usr/bin/env bash
# Device call 3 of the forty-fourth session: where the warps wait, instruction by instruction
# (Nsight Compute's warp-state sampling, scripts/profile-source.sh) in GDN's and DeltaNet's ReWY
# grad_chunk (the Recompute backward at shape 0: GDN's phases 1 and 5 take twice DeltaNet's cycles).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 240 bench_delta
echo "build exit $? at $((SECONDS - t0)) s"
for spec in "grad_chunk gdn bwd" "grad_chunk deltanet bwd"; do
  set -- $spec
  KERNEL=$1 OP=$2 SHAPE=0 DIRECTION=$3 LINES=45 OUT="$out" timeout 150 bash scripts/profile-source.sh >"$out/prof_$1_$2.txt" 2>&1
  echo "== $spec: exit $? at $((SECONDS - t0)) s"; head -60 "$out/prof_$1_$2.txt" | cut -c1-220
  obj=build-gpu/kernels/CMakeFiles/rewy_kernels.dir/delta/cuda/variant_$2.cu.o
  csv=$(ls "$out"/source_$1*_$2_s0.csv.gz 2>/dev/null | head -1)
  [ -n "$csv" ] && timeout 60 python3 scripts/sass_lines.py "$csv" 45 --obj "$obj" --kernel "$1" >"$out/lines_$1_$2.txt" 2>&1
  echo "-- by source line: exit $?"; head -55 "$out/lines_$1_$2.txt" | cut -c1-200
done
rm -f "$out"/source_*
echo "call done at $((SECONDS - t0)) s"
