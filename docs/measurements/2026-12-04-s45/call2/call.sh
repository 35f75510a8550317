#!/usr/bin/env bash
# Device call 2 of the forty-fifth session: where the forward's kernels wait, instruction by
# instruction and by source line (Nsight Compute's warp-state sampling, scripts/profile-source.sh,
# scripts/sass_lines.py --obj on the same build's objects), with the SASS pages kept: KDA's
# wy_prep_split at shape 0 (73% of KDA's forward; 15.8M excess shared wavefronts in the
# forty-fourth session's call 2, not yet named by line), GDN's fused wy_prep at shape 0 (its P,A
# phase 40%), DeltaNet's output pass at (1, 16384, 16) (its worst forward shape, 1.53x).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 260 bench_delta
echo "build exit $? at $((SECONDS - t0)) s"
for spec in "wy_prep_split kda fwd 0" "wy_prep gdn fwd 0" "state_fwd deltanet fwd 3"; do
  set -- $spec
  KERNEL=$1 OP=$2 SHAPE=$4 DIRECTION=$3 LINES=40 OUT="$out" timeout 120 bash scripts/profile-source.sh >"$out/prof_$1_$2.txt" 2>&1
  echo "== $spec: exit $? at $((SECONDS - t0)) s"; head -45 "$out/prof_$1_$2.txt" | cut -c1-220
  obj=build-gpu/kernels/CMakeFiles/rewy_kernels.dir/delta/cuda/variant_$2.cu.o
  csv=$(ls "$out"/source_$1*_$2_s$4.csv.gz 2>/dev/null | head -1)
  [ -n "$csv" ] && timeout 60 python3 scripts/sass_lines.py "$csv" 40 --obj "$obj" --kernel "$1" >"$out/lines_$1_$2.txt" 2>&1
  echo "-- by source line: exit $?"; cat "$out/lines_$1_$2.txt" | cut -c1-200
  rm -f "$out"/source_*.log
done
cd "$out" && tar -czf all.tar.gz --exclude=all.tar.gz . && find . -mindepth 1 ! -name all.tar.gz -delete
echo "call done at $((SECONDS - t0)) s"
