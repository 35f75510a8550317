#!/usr/bin/env bash
# On the GPU machine, in one call: rewy's delta-rule kernels timed and checked beside FLA's, with
# FLA's fla/ package and the reference scripts fla_anchor.py, fla_accuracy.py from a folder that
# travels with the call (FLA_DIR, default .fla); the side-by-side table is printed last.
#
#   scripts/bench-vs-fla.sh            all ops, six shapes, both policies, realistic gates, accuracy
#   OPS=gdn,kda SHAPES=0,3 POLICIES=recompute GATES=bench ACCURACY=0 FLA=0 scripts/bench-vs-fla.sh
#
# Phases:
#  1. In parallel, one process per op (FLA's Triton compilation is CPU-bound and costs 90-230 s per
#     op): bench/fla_warm.py compiles FLA's kernels for the timed shapes, and (ACCURACY=1)
#     bench/accuracy_vs_fla.py compares FLA and rewy on identical inputs (ACC_CASES, default the
#     part-1 sweep: T in {1,63,64,65,1000,4096} and 3 packed sequences, with and without h0, in
#     four processes per op; ACC_H default 16; SEEDS default 1; ACC_DEVICE=cpu checks the script with a mock FLA, no GPU).
#     Autotuning results are not cached in this phase (concurrent runs would bias FLA's choice of
#     configuration).
#  2. rewy's timing (bench_delta) and its accuracy against f64 and the bf16 twin (delta_accuracy),
#     on a quiet GPU.
#  3. FLA's timing (fla_anchor.py) and kernel profile (PROFILE=1 at PROFILE_SHAPE) in one process
#     (bench/fla_session.py): autotuning now only benchmarks the compiled configurations.
#  4. The table (bench/side_by_side.py) and the accuracy summaries.
# Environment: BUILD (default build-gpu, built if missing), OUT (results; default out), SAMPLES;
# BENCH_ARGS (more bench_delta options for our side, e.g. "--grad-warps 16 --prep-warps 16");
# SHAPES=none skips the timing; FLA_OPS (FLA's side, default OPS); ACC_OPS (default FLA_OPS);
# ACCURACY=0 skips both accuracy runs; ANCHOR=0 skips FLA's timing; WARM=0 skips the compilation
# phase (only where phase 1 already compiled the timed shapes: on a fresh machine FLA then
# compiles one op after another inside its timing, and a restored pack without those shapes does
# not help: 2026-11-30 lost GDN2's rows to it); ONLY=1 stops after phase 1 (the device's 10-minute calls: call 1 compiles and checks
# accuracy, call 2 on the still-warm machine times with WARM=0 ACCURACY=0); FLA_TIMEOUT (s, default 540, per phase). TRITON_CACHE_DIR (default .triton-cache) is kept
# on a warm machine, so a later call skips the compilation; across sessions, PACK_TRITON=1 returns
# the compiled kernels as OUT/triton-cache.tar.xz.NN (without IRs or autotuning results), and a
# later call that carries them in TRITON_PACK (default .triton-pack) restores them first.
# OUT receives five files: ours.csv, acc.txt, fla_anchor.csv, fla_session.log (FLA's profile and
# the per-draw SAME lines), side_by_side.txt. Logs stay in BUILD (the device tool returns only a
# few files).
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
export PYTHONPATH="$(realpath bench):$fla_dir${PYTHONPATH:+:$PYTHONPATH}"
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$(realpath -m .triton-cache)}
# FLA's kernels compiled in an earlier session (bench/triton_cache.py): a fresh machine skips most
# of phase 1's compilation. PACK_TRITON=1 writes this machine's kernels to OUT for the next one.
pack_dir=${TRITON_PACK:-.triton-pack}
if [ -d "$pack_dir" ]; then
  python3 bench/triton_cache.py unpack "$pack_dir" "$TRITON_CACHE_DIR" || echo "bench-vs-fla: compiling FLA from scratch"
fi
pack_triton() {
  [ "${PACK_TRITON:-0}" = 1 ] && [ -d "$TRITON_CACHE_DIR" ] && python3 bench/triton_cache.py pack "$TRITON_CACHE_DIR" "$out"
  return 0
}

if [ ! -x "$build/bench/bench_delta" ] || [ ! -x "$build/rewy" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DREWY_CUDA=ON >/dev/null &&
    cmake --build "$build" -j "$(nproc)" --target bench_delta delta_accuracy rewy || exit 1
fi
fla_ops=$(echo "${FLA_OPS:-$ops}" | sed 's/deltanet/delta/')
acc_ops=$(echo "${ACC_OPS:-$fla_ops}" | sed 's/deltanet/delta/')
[ "${FLA:-1}" = 1 ] || { acc_ops=""; }
[ "${ACCURACY:-1}" = 1 ] || acc_ops=""
time_fla=1
[ "${FLA:-1}" = 1 ] && [ "${ANCHOR:-1}" = 1 ] && [ "$shapes" != none ] || time_fla=0

# Phase 1: FLA's compilation and the same-input accuracy, one process per op.
t0=$SECONDS
pids=()
if [ "$time_fla" = 1 ] && [ "${WARM:-1}" = 1 ]; then
  for op in ${fla_ops//,/ }; do
    TRITON_CACHE_AUTOTUNING=0 timeout "${FLA_TIMEOUT:-540}" python3 bench/fla_warm.py --ops "$op" --shapes "$shapes" \
      --policies "$policies" >"$build/fla_warm_$op.log" 2>&1 &
    pids+=($!)
  done
fi
# The sweep runs as one process per op and group of cases that share Triton's specialisations
# (T = 1; T not a multiple of 16; T a multiple of 16; varlen), so FLA's compilation of each
# specialisation runs in parallel instead of one after another.
acc_groups=("1,1:h0" "63,63:h0,65,65:h0,1000,1000:h0" "64,64:h0,4096,4096:h0" "v63+1000+130,v63+1000+130:h0")
[ -n "${ACC_CASES:-}" ] && acc_groups=("$ACC_CASES")
for op in ${acc_ops//,/ }; do
  rm -f "$build/acc_vs_fla_${op}"_*.log
  for g in "${!acc_groups[@]}"; do
    # (the bf16 twin's small CPU GEMMs: one BLAS thread a process, many processes side by side)
    OPENBLAS_NUM_THREADS=1 TRITON_CACHE_AUTOTUNING=0 timeout "${FLA_TIMEOUT:-540}" \
      python3 bench/accuracy_vs_fla.py --rewy "$build/rewy" --ops "$op" \
      --cases "${acc_groups[$g]}" --H "${ACC_H:-16}" --seeds "${SEEDS:-1}" ${ACC_DEVICE:+--device "$ACC_DEVICE"} \
      --work "/tmp/rewy-accuracy-$op-$g" >"$build/acc_vs_fla_${op}_$g.log" 2>&1 &
    pids+=($!)
  done
done
for p in "${pids[@]}"; do wait "$p" || echo "bench-vs-fla: a phase-1 process failed (exit $?): see $build/fla_warm_*.log, $build/acc_vs_fla_*.log"; done
[ ${#pids[@]} = 0 ] || { echo "== phase 1 (FLA compilation, same-input accuracy) took $((SECONDS - t0)) s"; tail -n 3 "$build"/fla_warm_*.log 2>/dev/null; }
same_input_summaries() {  # one table per op over its groups' SAME lines; unfinished groups named
  local op log
  for op in ${acc_ops//,/ }; do
    python3 bench/accuracy_vs_fla.py --summarize "$build/acc_vs_fla_${op}"_*.log
    for log in "$build/acc_vs_fla_${op}"_*.log; do
      grep -q 'same-input accuracy summary' "$log" ||
        { echo "== same-input accuracy, $(basename "$log") did not finish (its finished cases are above):"; tail -n 3 "$log"; }
    done
  done
}
append_same_input_logs() {  # the per-draw SAME lines go back in fla_session.log
  local op
  for op in ${acc_ops//,/ }; do cat "$build/acc_vs_fla_${op}"_*.log >>"$out/fla_session.log"; done
}
if [ "${ONLY:-0}" = 1 ]; then
  : >"$out/fla_session.log"
  append_same_input_logs
  same_input_summaries | tee "$out/side_by_side.txt"
  pack_triton
  exit 0
fi

# The machine's state before each timed phase, at the table's end: FLA's forward at the 16-head
# shapes is bound by its host-side launches and moved 0.53-0.80 -> 0.86-0.92 ms between two calls of
# one session (docs/measurements/2026-12-05-s50/), ours by under 1%.
machine=()
machine_state() {
  machine+=("$1: load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null); GPU $(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>/dev/null | head -n 1)")
}

# Phase 2: ours.
machine_state "before ours"
if [ "$shapes" != none ]; then
  "$build/bench/bench_delta" --ops "$ops" --shapes "$shapes" --policies "$policies" --gates "$gates" \
    --samples "$samples" --csv "$out/ours.csv" ${BENCH_ARGS:-} 2>&1 | tee "$build/bench_delta.log"
fi
acc_args=()
if [ "${ACCURACY:-1}" = 1 ]; then  # ours against f64 and against the bf16 CPU twin (the 2x bar)
  "$build/bench/delta_accuracy" --ops "$ops" >"$out/acc.txt" 2>&1
  acc_args=(--acc "$out/acc.txt")
fi

# Phase 3: FLA's timing and profile.
machine_state "before FLA"
: >"$out/fla_session.log"
if [ "$time_fla" = 1 ] || { [ "${FLA:-1}" = 1 ] && [ "${PROFILE:-0}" = 1 ]; }; then
  session=(--ops "$fla_ops" --shapes "$shapes" --policies "$policies" --out "$out" --anchor "$time_fla")
  [ "${PROFILE:-0}" = 1 ] && session+=(--profile-shape "${PROFILE_SHAPE:-0}")
  TRITON_CACHE_AUTOTUNING=1 timeout "${FLA_TIMEOUT:-540}" python3 bench/fla_session.py "${session[@]}" 2>&1 |
    tee -a "$out/fla_session.log" | grep -vE "^PROFILE "
fi
append_same_input_logs

# Phase 4: the table.
[ -f "$out/ours.csv" ] || echo "op,B,T,H,D,policy,gates,dir,algo,median_ms,min_ms" >"$out/ours.csv"
[ -f "$out/fla_anchor.csv" ] || echo "op,B,T,H,D,policy,fwd_ms,bwd_ms,first_call_s,error" >"$out/fla_anchor.csv"
{
  python3 bench/side_by_side.py --ours "$out/ours.csv" --fla "$out/fla_anchor.csv" "${acc_args[@]}"
  if grep -qE "^PROFILE" "$out/fla_session.log" 2>/dev/null; then
    echo; echo "== FLA kernel profile (top kernels) =="; grep -E "^PROFILE" "$out/fla_session.log" | grep -E "total|^PROFILE  " | head -80
  fi
  same_input_summaries
  machine_state "after FLA"
  echo; echo "== machine (load average; GPU name, SM and memory clocks, temperature, power) =="
  printf '%s\n' "${machine[@]}"
} | tee "$out/side_by_side.txt"
pack_triton
