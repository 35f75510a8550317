#!/usr/bin/env bash
# s26 call 3 (the session's last device time): grad_chunk's factored accumulators, decided and
# tabled in one call. Build; whole ops GDN/KDA/GDN2 default; per set (factor, facwg2): the GPU tests
# of GDN/KDA/GDN2 and the channel-gate cases, memcheck+racecheck small case, whole ops against the
# default; each variant takes the set with the best Recompute rewy backward geomean (above 1.005,
# tests and sanitizers clean), scoped as set:variant; the FLA table with those; phases if time is left.
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
source scripts/common.sh
export NCCL_NVLS_ENABLE=0
{ rewy_configure build-gpu -DREWY_CUDA=ON >/dev/null && timeout 280 bash -c 'source scripts/common.sh; rewy_build build-gpu gpu_test_delta bench_delta delta_accuracy rewy'; } > "$out/build.log" 2>&1
rc=$?; echo "build rc $rc at $((SECONDS - t0)) s"; tail -3 "$out/build.log"
[ $rc -eq 0 ] || exit $rc
b=build-gpu/bench/bench_delta
export OPS_VARIANTS=gdn,kda,gdn2 OPS_SHAPES=0,3,4,5 OPS_POLICIES=recompute,save OPS_BACKWARD=rewy,baseline
rewy_ops_csv $b "$out/ops_default.csv"
f='GpuDelta.GDN:GpuDelta.KDA:GpuDelta.GDN2:GpuDelta.ChannelGatesRealisticAndOutOfRange:GpuDelta.MisalignedInputViews'
declare -A best=([gdn]=1.005 [kda]=1.005 [gdn2]=1.005) pick=()
for e in ${SETS:-factor facwg2}; do
  REWY_EXPERIMENTS=$e timeout 90 build-gpu/tests/gpu_test_delta --gtest_filter="$f" > "$out/tests_$e.log" 2>&1
  rc=$?; echo "== $e: tests rc $rc at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$out/tests_$e.log" | tr '\n' ' ')"
  [ $rc -eq 0 ] || { grep -E "Failure|Expected|Which|error" "$out/tests_$e.log" | head -20; continue; }
  san=0
  for tool in memcheck racecheck; do
    REWY_EXPERIMENTS=$e REWY_GPU_TEST_SMALL=1 timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 \
      build-gpu/tests/gpu_test_delta --gtest_filter='GpuDelta.GDN:GpuDelta.KDA:GpuDelta.GDN2' > "$out/san_$tool.log" 2>&1
    st=$?; [ $st -eq 0 ] || san=1
    echo "   $tool rc $st $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1)"
  done
  [ $san -eq 0 ] || { grep -E "Error|Race" "$out/san_"*.log | head -10; continue; }
  rewy_ops_csv $b "$out/ops_$e.csv" REWY_EXPERIMENTS=$e || continue
  python3 bench/compare_ours.py "$out/ops_default.csv" "$out/ops_$e.csv" | tee "$out/cmp_$e.txt"
  echo "   baseline backward:"; python3 bench/compare_ours.py --algo baseline "$out/ops_default.csv" "$out/ops_$e.csv" | grep bwd
  for v in gdn kda gdn2; do
    g=$(awk -v v=$v '$1 == v && $2 == "recompute" && $3 == "bwd" {print $4}' "$out/cmp_$e.txt")
    [ -n "$g" ] && awk "BEGIN{exit !($g > ${best[$v]})}" && { best[$v]=$g; pick[$v]=$e; }
  done
  echo "   at $((SECONDS - t0)) s"
done
exps=""; for v in gdn kda gdn2; do [ -n "${pick[$v]:-}" ] && exps+="${exps:+,}${pick[$v]}:$v"; done
echo "chosen: REWY_EXPERIMENTS='$exps' (gdn ${best[gdn]}, kda ${best[kda]}, gdn2 ${best[gdn2]})"
left=$((${LIMIT_S:-575} - (SECONDS - t0)))
if [ $left -ge 140 ]; then
  mkdir -p "$out/table"
  REWY_EXPERIMENTS="$exps" BUILD=build-gpu ACCURACY=0 SAMPLES=10 FLA_TIMEOUT=$((left - 20)) OUT="$out/table" \
    timeout "$left" bash scripts/bench-vs-fla.sh > "$out/table/bench.log" 2>&1 || true
  echo "table at $((SECONDS - t0)) s"
  grep -E '^==|geomean|min ' "$out/table/side_by_side.txt" 2>/dev/null || tail -20 "$out/table/bench.log"
  rm -f "$out/table/bench.log" "$out/table/fla_session.log" "$out/table/acc.txt"
else
  echo "no table ($left s left)"
fi
left=$((${LIMIT_S:-575} - (SECONDS - t0)))
if [ $left -ge 25 ] && [ -n "$exps" ]; then
  REWY_EXPERIMENTS="$exps" REWY_KERNEL_TIMING=2 timeout $((left - 5)) $b --ops gdn,kda,gdn2 --shapes 0 --policies recompute --gates bench --backward rewy --samples 3 > "$out/phases_chosen.txt" 2>&1
  grep -hE "grad_chunk.*(us/call|cycles)" "$out/phases_chosen.txt" | cut -c1-250
fi
echo "done at $((SECONDS - t0)) s"
rm -f "$out"/san_*.log
(cd "$out" && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz .)
