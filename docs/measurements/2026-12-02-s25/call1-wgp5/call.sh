#!/usr/bin/env bash
# s25 call 1 (no .triton-pack): FLA compiles beside the build and tests; wgp5 experiment (tests,
# sanitizers, ops A/B after FLA's compile); pack FLA's kernels; the table if time is left, with
# KDA on wgp5 where it won the A/B.
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/bench:$PWD/.fla"
export TRITON_CACHE_DIR="$PWD/.triton-cache"
mkdir -p build-gpu; compiled=$PWD/build-gpu/fla-compiled; rm -f "$compiled"
(
  pids=()
  for op in delta gdn kda gdn2; do
    TRITON_CACHE_AUTOTUNING=0 timeout "${WARM_S:-380}" python3 bench/fla_warm.py --ops $op >"build-gpu/fla_warm_$op.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || echo "FLA compile of one op ended with $?"; done
  echo "FLA compiled at $((SECONDS - t0)) s"; touch "$compiled"
) &
WAIT_FOR="$compiled" SASS=0 EXPERIMENTS="${EXPS:-wgp5}" OPS_SHAPES=0,3,4,5 OUT="$out" bash scripts/device-experiments.sh > "$out/experiments.log" 2>&1
rc=$?
wait
tail -32 "$out/experiments.log"
grep -hE "grad_chunk_rewy.*cycles:" "$out/phases.txt" "$out/exp0/phases.txt" | cut -c1-250
echo "experiments rc $rc at $((SECONDS - t0)) s"
python3 bench/triton_cache.py pack "$TRITON_CACHE_DIR" "$out" && echo "packed at $((SECONDS - t0)) s"
kda=$(grep -E '^kda +recompute bwd' "$out/experiments.log" | tail -1 | awk '{print $4}')
exps=""; awk "BEGIN{exit !(${kda:-0} > 1.0)}" && exps="wgp5:kda"
left=$((${LIMIT_S:-585} - (SECONDS - t0)))
if [ $rc -eq 0 ] && [ $left -ge 175 ]; then
  mkdir -p "$out/table"; echo "table with REWY_EXPERIMENTS='$exps'"
  REWY_EXPERIMENTS="$exps" BUILD=build-gpu WARM=0 ACCURACY=0 SAMPLES=10 FLA_TIMEOUT=$((left - 20)) OUT="$out/table" TRITON_PACK=/nonexistent \
    timeout "$left" bash scripts/bench-vs-fla.sh > "$out/table/bench.log" 2>&1 || true
  echo "table at $((SECONDS - t0)) s"
  grep -E '^==|geomean|min ' "$out/table/side_by_side.txt" 2>/dev/null || tail -20 "$out/table/bench.log"
  rm -f "$out/table/bench.log" "$out/table/fla_session.log" "$out/table/acc.txt"
else
  echo "no table ($left s left)"
fi
mkdir -p "$out/keep"; mv "$out"/triton-cache.tar.xz.* "$out/keep/" 2>/dev/null
(cd "$out" && tar -czf /tmp/all.tar.gz --exclude=./keep . && find . -mindepth 1 -maxdepth 1 ! -name keep -exec rm -rf {} + && mv /tmp/all.tar.gz . && mv keep/* . && rmdir keep)
ls -la "$out"
