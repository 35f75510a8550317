#!/usr/bin/env bash
# On the GPU machine, in one call: rewy's delta-rule kernels timed and checked beside FLA's
# (fla_anchor.py and fla_accuracy.py, with FLA's fla/ package, from a folder that travels with the
# call: FLA_DIR, default .fla), then the side-by-side table (bench/side_by_side.py) printed last.
#
#   scripts/bench-vs-fla.sh            all ops, six shapes, both policies, realistic gates, accuracy
#   OPS=gdn,kda SHAPES=0,3 POLICIES=recompute GATES=bench ACCURACY=0 FLA=0 scripts/bench-vs-fla.sh
#
# Environment: BUILD (default build-gpu, built if missing), OUT (results; default out), SAMPLES;
# FLA_OPS (FLA's side, default OPS), PROFILE=1 (FLA's kernel-by-kernel profile at shape 0),
# SAVE_TRITON_CACHE=1 (packs FLA's Triton cache, autotuning included, into OUT to carry next time).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${BUILD:-build-gpu}
out=${OUT:-out}
fla_dir=$(realpath -m "${FLA_DIR:-.fla}")
ops=${OPS:-deltanet,gdn,kda,gdn2}
shapes=${SHAPES:-0,1,2,3,4,5}
policies=${POLICIES:-recompute,save}
gates=${GATES:-bench,realistic}
samples=${SAMPLES:-30}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
export PYTHONPATH="$fla_dir${PYTHONPATH:+:$PYTHONPATH}"
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$fla_dir/triton-cache} TRITON_CACHE_AUTOTUNING=1

if [ ! -x "$build/bench/bench_delta" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DREWY_CUDA=ON >/dev/null &&
    cmake --build "$build" -j "$(nproc)" --target bench_delta delta_accuracy || exit 1
fi
fla_ops=$(echo "${FLA_OPS:-$ops}" | sed 's/deltanet/delta/')

"$build/bench/bench_delta" --ops "$ops" --shapes "$shapes" --policies "$policies" --gates "$gates" \
  --samples "$samples" --csv "$out/ours.csv" 2>&1 | tee "$out/bench_delta.log"
if [ "${FLA:-1}" = 1 ]; then
  python3 "$fla_dir/fla_anchor.py" --ops "$fla_ops" --shapes "$shapes" --policies "$policies" --out "$out" 2>&1 |
    tee "$out/fla_anchor.log"
fi
if [ "${FLA:-1}" = 1 ] && [ "${PROFILE:-0}" = 1 ]; then
  python3 bench/fla_profile.py --ops "$fla_ops" --shape 0 2>&1 | tee "$out/fla_profile.txt" | grep -E "total|^PROFILE  " | head -80
fi
acc_args=()
if [ "${ACCURACY:-1}" = 1 ]; then
  "$build/bench/delta_accuracy" --ops "$ops" >"$out/acc.txt" 2>&1
  [ "${FLA:-1}" = 1 ] && python3 "$fla_dir/fla_accuracy.py" --ops "$fla_ops" >"$out/fla_acc.txt" 2>&1
  acc_args=(--acc "$out/acc.txt" --fla-acc "$out/fla_acc.txt")
fi
[ -f "$out/fla_anchor.csv" ] || echo "op,B,T,H,D,policy,fwd_ms,bwd_ms,first_call_s,error" >"$out/fla_anchor.csv"
python3 bench/side_by_side.py --ours "$out/ours.csv" --fla "$out/fla_anchor.csv" "${acc_args[@]}" | tee "$out/side_by_side.txt"
if [ "${SAVE_TRITON_CACHE:-0}" = 1 ] && [ -d "$TRITON_CACHE_DIR" ]; then
  tar -C "$(dirname "$TRITON_CACHE_DIR")" -czf "$out/triton-cache.tgz" "$(basename "$TRITON_CACHE_DIR")"
  [ "$(stat -c %s "$out/triton-cache.tgz")" -lt 15000000 ] || rm -f "$out/triton-cache.tgz"
fi
