#!/usr/bin/env bash
# The first device call of a session whose machine and checkout have no compiled FLA kernels
# (.triton-pack missing): FLA's Triton kernels compile (four bench/fla_warm.py processes, one per
# op) while this tree builds and runs the GPU tests and sanitizers; once they have compiled (FLA's
# compilation runs kernels on the GPU), every kernel's phases at PHASE_SHAPES, with AB_SRC a base
# tree timed beside it; then the FLA table, and the compiled kernels packed into $OUT for the next
# calls (copy the triton-cache.tar.xz.* files it returns into .triton-pack/). At most 8 files in
# $OUT: call.log, gpucheck.log, ab_compare.txt (AB_SRC), phases.txt, ours.csv, fla_anchor.csv,
# side_by_side.txt, triton-cache.tar.xz.00.
#
#   here:    (for an A/B) rm -rf build-ab && mkdir -p build-ab/src && git archive BASE | tar -x -C build-ab/src
#   device:  bash scripts/device-fresh.sh   (carry [".fla"], and "build-ab" for an A/B; ~9.5 min)
#
# Environment: AB_SRC (a base tree; default build-ab/src where it exists), PHASE_SHAPES (default
# 0), SANITIZERS (default 1), WARM_S (FLA's compile limit, default 400 s; ops not finished compile
# inside the timing), LIMIT_S (the call's limit, default 585).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
out=${OUT:-out}
mkdir -p "$out" build-gpu
log="$out/call.log"
t0=$SECONDS
[ -d "${FLA_DIR:-.fla}/fla" ] || { echo "device-fresh: no FLA package at ${FLA_DIR:-.fla}" | tee "$log"; exit 2; }
ab=${AB_SRC-}
[ -z "${AB_SRC+x}" ] && [ -d build-ab/src ] && ab=build-ab/src
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/bench:$(realpath -m "${FLA_DIR:-.fla}")"
export TRITON_CACHE_DIR="$PWD/.triton-cache"
compiled=build-gpu/fla-compiled
rm -f "$compiled"
(
  pids=()
  for op in delta gdn kda gdn2; do
    TRITON_CACHE_AUTOTUNING=0 timeout "${WARM_S:-400}" python3 bench/fla_warm.py --ops $op >"build-gpu/fla_warm_$op.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || echo "an FLA compile process ended with $? (its op compiles inside the timing)" >>"$log"; done
  echo "FLA compiled at $((SECONDS - t0)) s" >>"$log"
  touch "$compiled"
) &
warm_pid=$!
SANITIZERS=${SANITIZERS:-1} BENCH=0 PHASES=1 PHASE_SHAPES=${PHASE_SHAPES:-0} PHASES_WAIT_FOR="$compiled" AB_SRC=$ab \
  bash scripts/gpu-check.sh build-gpu >"$out/gpucheck.log" 2>&1
rc=$?
wait "$warm_pid"
echo "gpu-check exit $rc at $((SECONDS - t0)) s" >>"$log"
tail -12 "$out/gpucheck.log" >>"$log"
if [ -n "$ab" ]; then
  sed -n '/^shape [0-9]*:/,/^$/p' "$out/gpucheck.log" | grep -v '^\[' >"$out/ab_compare.txt"
  cat "$out/ab_compare.txt" >>"$log"
fi
rm -f "$out"/phases_base*.txt "$out"/phases_s*.txt  # in ab_compare.txt; phases.txt (shape 0) stays
if [ $rc -eq 0 ]; then
  left=$((${LIMIT_S:-585} - 10 - (SECONDS - t0)))
  WARM=0 ACCURACY=0 SAMPLES=10 PACK_TRITON=1 FLA_TIMEOUT=$((left > 60 ? left - 30 : 30)) BUILD=build-gpu OUT="$out" \
    timeout "$left" bash scripts/bench-vs-fla.sh >build-gpu/bench.log 2>&1
  echo "table exit $? at $((SECONDS - t0)) s" >>"$log"
  grep -E '^==|geomean|min ' "$out/side_by_side.txt" >>"$log" 2>/dev/null || tail -30 build-gpu/bench.log >>"$log"
  rm -f "$out/fla_session.log" "$out/acc.txt"
fi
cat "$log"
exit $rc
