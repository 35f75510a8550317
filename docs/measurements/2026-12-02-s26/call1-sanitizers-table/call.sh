#!/usr/bin/env bash
# s26 call 1: present defaults (KDA's early gates) under the GPU tests and the sanitizers, phases at
# shapes 0 and 5; KDA's ops default / lateg:kda (the plain slice kernel); the FLA table.
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
SANITIZERS=1 BENCH=0 PHASES=1 PHASE_SHAPES=0,5 OUT="$out" bash scripts/gpu-check.sh build-gpu > "$out/gpucheck.log" 2>&1
rc=$?
tail -24 "$out/gpucheck.log"
echo "gpu-check rc $rc at $((SECONDS - t0)) s"
source scripts/common.sh
if [ $rc -eq 0 ]; then
  OPS_VARIANTS=kda OPS_SHAPES=0,3,4,5 OPS_POLICIES=recompute,save OPS_BACKWARD=rewy rewy_ops_csv build-gpu/bench/bench_delta "$out/ops_kda_default.csv"
  OPS_VARIANTS=kda OPS_SHAPES=0,3,4,5 OPS_POLICIES=recompute,save OPS_BACKWARD=rewy rewy_ops_csv build-gpu/bench/bench_delta "$out/ops_kda_lateg.csv" REWY_EXPERIMENTS=lateg
  echo "KDA default / lateg (above 1: lateg faster):"
  python3 bench/compare_ours.py "$out/ops_kda_default.csv" "$out/ops_kda_lateg.csv"
fi
left=$((${LIMIT_S:-560} - (SECONDS - t0)))
if [ $rc -eq 0 ] && [ $left -ge 150 ]; then
  mkdir -p "$out/table"
  BUILD=build-gpu ACCURACY=0 SAMPLES=10 FLA_TIMEOUT=$((left - 20)) OUT="$out/table" \
    timeout "$left" bash scripts/bench-vs-fla.sh > "$out/table/bench.log" 2>&1 || true
  echo "table at $((SECONDS - t0)) s"
  grep -E '^==|geomean|min ' "$out/table/side_by_side.txt" 2>/dev/null || tail -20 "$out/table/bench.log"
  rm -f "$out/table/bench.log" "$out/table/fla_session.log" "$out/table/acc.txt"
else
  echo "no table ($left s left)"
fi
(cd "$out" && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz .)
ls -la "$out"
