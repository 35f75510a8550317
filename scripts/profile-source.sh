#!/usr/bin/env bash
# On the GPU machine: where one kernel's warps stall, instruction by instruction (Nsight Compute's
# warp-state sampling). One launch of the first kernel matching KERNEL at one shape; prints the
# samples by SASS opcode, then the LINES instructions with the most samples (their share of the
# kernel's and their largest stall reasons: scripts/sass_lines.py), and writes the raw SASS
# source page to OUT/source_<name>.csv.gz.
#
#   KERNEL=wy_prep OP=kda SHAPE=0 DIRECTION=fwd LINES=40 OUT=out BUILD=build-gpu scripts/profile-source.sh
#
# KERNEL matches the function's name (wy_prep_kernel, grad_chunk_kernel, state_fwd_kernel, ...;
# ReWY or baseline is the bench's --backward, rewy here). By source line: scripts/sass_lines.py
# CSV --obj OBJ --kernel RE with the same build's object of the variant.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${BUILD:-build-gpu}
out=${OUT:-out}
kernel=${KERNEL:?KERNEL=regex of the kernel name}
op=${OP:-kda}
shape=${SHAPE:-0}
direction=${DIRECTION:-fwd}
lines=${LINES:-40}
name=${NAME:-${kernel//[^A-Za-z0-9_]/_}_${op}_s$shape}
mkdir -p "$out"
command -v ncu >/dev/null 2>&1 || { echo "profile-source: ncu not found" >&2; exit 1; }
[ -x "$build/bench/bench_delta" ] || { echo "profile-source: build $build/bench/bench_delta first" >&2; exit 1; }
rep="$out/.source_$name"
ncu --clock-control none --kernel-name regex:"$kernel" --launch-skip 2 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --import-source yes -f -o "$rep" \
  "$build/bench/bench_delta" --ops "$op" --shapes "$shape" --policies recompute --gates bench \
  --backward rewy --samples 2 --benchmark_filter="/$direction/" >"$out/source_$name.log" 2>&1 ||
  { echo "profile-source: ncu failed:"; tail -5 "$out/source_$name.log"; exit 1; }
[ -f "$rep.ncu-rep" ] || { echo "profile-source: no launch matched $kernel:"; grep -A12 "No kernels were profiled" "$out/source_$name.log"; exit 1; }
csv="$out/source_$name.csv"
ncu -i "$rep.ncu-rep" --page source --csv --print-source sass >"$csv" 2>>"$out/source_$name.log"
rm -f "$rep.ncu-rep"
python3 scripts/sass_lines.py "$csv" "$lines"
gzip -f "$csv"
