#!/usr/bin/env bash
# On the GPU machine, in one call: rewy's delta-rule kernels timed and checked beside FLA's, with
# FLA's fla/ package and the reference scripts fla_anchor.py, fla_accuracy.py from a folder that
# travels with the call (FLA_DIR, default .fla); the side-by-side table is printed last.
#
#   scripts/bench-vs-fla.sh            all ops, six shapes, both policies, realistic gates, accuracy
#   OPS=gdn,kda SHAPES=0,3 POLICIES=recompute GATES=bench ACCURACY=0 FLA=0 scripts/bench-vs-fla.sh
#
# Environment: BUILD (default build-gpu, built if missing), OUT (results; default out), SAMPLES;
# SHAPES=none skips the timing; FLA_OPS (FLA's side, default OPS); PROFILE=1 (FLA's kernel-by-kernel profile at PROFILE_SHAPE,
# default 0); ACCURACY=0 skips both accuracy runs (ours vs f64 and the bf16 twin; ours vs FLA on
# identical inputs, SEEDS default 1,2,3, ACC_OPS default FLA_OPS); ANCHOR=0 skips FLA's timing; FLA_TIMEOUT (s, default 540).
# FLA's three parts run in one Python process (bench/fla_session.py) so its autotuning is paid
# once; TRITON_CACHE_DIR (default .triton-cache, kept on a warm machine) with
# TRITON_CACHE_AUTOTUNING=1 keeps the tuned configurations for later calls.
# OUT receives five files (ours.csv, acc.txt, fla_anchor.csv, fla_session.log with FLA's profile
# and the per-draw SAME lines, side_by_side.txt); logs stay in BUILD (the device tool returns
# only a few files).
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
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$(realpath -m .triton-cache)} TRITON_CACHE_AUTOTUNING=1

if [ ! -x "$build/bench/bench_delta" ] || [ ! -x "$build/rewy" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DREWY_CUDA=ON >/dev/null &&
    cmake --build "$build" -j "$(nproc)" --target bench_delta delta_accuracy rewy || exit 1
fi
fla_ops=$(echo "${FLA_OPS:-$ops}" | sed 's/deltanet/delta/')

if [ "$shapes" != none ]; then
  "$build/bench/bench_delta" --ops "$ops" --shapes "$shapes" --policies "$policies" --gates "$gates" \
    --samples "$samples" --csv "$out/ours.csv" 2>&1 | tee "$build/bench_delta.log"
fi
acc_args=()
if [ "${ACCURACY:-1}" = 1 ]; then  # ours against f64 and against the bf16 CPU twin (the 2x bar)
  "$build/bench/delta_accuracy" --ops "$ops" >"$out/acc.txt" 2>&1
  acc_args=(--acc "$out/acc.txt")
fi
if [ "${FLA:-1}" = 1 ]; then
  session=(--ops "$fla_ops" --shapes "$shapes" --policies "$policies" --out "$out")
  [ "${PROFILE:-0}" = 1 ] && session+=(--profile-shape "${PROFILE_SHAPE:-0}")
  [ "${ACCURACY:-1}" = 1 ] && session+=(--accuracy --rewy "$build/rewy" --seeds "${SEEDS:-1,2,3}" --acc-ops "${ACC_OPS:-$fla_ops}")
  [ "${ANCHOR:-1}" = 1 ] && [ "$shapes" != none ] || session+=(--anchor 0)
  PYTHONPATH="bench:$PYTHONPATH" timeout "${FLA_TIMEOUT:-540}" python3 bench/fla_session.py "${session[@]}" 2>&1 |
    tee "$out/fla_session.log" | grep -vE "^(PROFILE|SAME) "
fi
[ -f "$out/ours.csv" ] || echo "op,B,T,H,D,policy,gates,dir,algo,median_ms,min_ms" >"$out/ours.csv"
[ -f "$out/fla_anchor.csv" ] || echo "op,B,T,H,D,policy,fwd_ms,bwd_ms,first_call_s,error" >"$out/fla_anchor.csv"
{
  python3 bench/side_by_side.py --ours "$out/ours.csv" --fla "$out/fla_anchor.csv" "${acc_args[@]}"
  if grep -qE "^PROFILE" "$out/fla_session.log" 2>/dev/null; then
    echo; echo "== FLA kernel profile (top kernels) =="; grep -E "^PROFILE" "$out/fla_session.log" | grep -E "total|^PROFILE  " | head -80
  fi
  [ -f "$out/fla_session.log" ] && sed -n '/same-input accuracy summary/,$p' "$out/fla_session.log"
} | tee "$out/side_by_side.txt"
