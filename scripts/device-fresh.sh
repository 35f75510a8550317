#!/usr/bin/env bash
# The first device call of a session whose machine and checkout have no compiled FLA kernels
# (.triton-pack missing): this tree builds while FLA's Triton kernels compile (four
# bench/fla_warm.py processes, one per op), then the GPU tests, every kernel's phases at shape 0,
# the FLA table, and the compiled kernels packed into $OUT for the next calls (copy the
# triton-cache.tar.xz.* files it returns into .triton-pack/). At most 8 files in $OUT.
#
#   device:  bash scripts/device-fresh.sh      (carry [".fla"]; ~9.5 min on a fresh machine)
#
# Environment: WARM_S (FLA's compile limit, default 420 s; ops not finished compile inside the
# timing), LIMIT_S (the call's limit, default 590).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
out=${OUT:-out}
mkdir -p "$out" build-gpu
log="$out/call.log"
t0=$SECONDS
[ -d "${FLA_DIR:-.fla}/fla" ] || { echo "device-fresh: no FLA package at ${FLA_DIR:-.fla}" | tee "$log"; exit 2; }
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/bench:$(realpath -m "${FLA_DIR:-.fla}")"
export TRITON_CACHE_DIR="$PWD/.triton-cache"
pids=()
for op in delta gdn kda gdn2; do
  TRITON_CACHE_AUTOTUNING=0 timeout "${WARM_S:-420}" python3 bench/fla_warm.py --ops $op >"build-gpu/fla_warm_$op.log" 2>&1 &
  pids+=($!)
done
source scripts/common.sh
{ rewy_configure build-gpu -DREWY_CUDA=ON >/dev/null && rewy_build build-gpu >build-gpu/build.log 2>&1; } 2>>"$log"
rc=$?
echo "build exit $rc at $((SECONDS - t0)) s" >>"$log"
if [ $rc -eq 0 ]; then  # the GPU tests beside FLA's (CPU-bound) compilation
  ctest --test-dir build-gpu -L gpu --output-on-failure --no-tests=error >build-gpu/ctest.log 2>&1
  echo "gpu tests exit $? at $((SECONDS - t0)) s: $(grep -E 'tests passed|tests failed' build-gpu/ctest.log)" >>"$log"
  grep -E "\*\*\*Failed|FAILED" build-gpu/ctest.log | head -20 >>"$log"
fi
for p in "${pids[@]}"; do wait "$p" || echo "an FLA compile process ended with $? (its op compiles inside the timing)" >>"$log"; done
echo "FLA compiled at $((SECONDS - t0)) s" >>"$log"
if [ $rc -eq 0 ]; then
  REWY_KERNEL_TIMING=2 build-gpu/bench/bench_delta --ops deltanet,gdn,kda,gdn2 --shapes 0 --policies recompute \
    --gates bench --samples 3 >"$out/phases.txt" 2>&1
  left=$((${LIMIT_S:-590} - 10 - (SECONDS - t0)))
  WARM=0 ACCURACY=0 SAMPLES=10 PACK_TRITON=1 FLA_TIMEOUT=$((left > 60 ? left - 30 : 30)) BUILD=build-gpu OUT="$out" \
    timeout "$left" bash scripts/bench-vs-fla.sh >build-gpu/bench.log 2>&1
  echo "table exit $? at $((SECONDS - t0)) s" >>"$log"
  grep -E '^==|geomean|min ' "$out/side_by_side.txt" >>"$log" 2>/dev/null || tail -30 build-gpu/bench.log >>"$log"
  rm -f "$out/fla_session.log" "$out/acc.txt"
fi
cat "$log"
exit $rc
