#!/usr/bin/env bash
# s25 call 2: default tests and phases; sweeps of grad_chunk at 8 warps (with EXP 0, 3, 2); the FLA table.
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
SASS=0 EXPERIMENTS='-' OPS_SHAPES=0,3,4,5 SWEEPS="${SWEEPS:---grad-warps 8|REWY_EXPERIMENTS=wgp2 --grad-warps 8|REWY_EXPERIMENTS=wgp1 --grad-warps 8}" \
  OUT="$out" bash scripts/device-experiments.sh > "$out/experiments.log" 2>&1
rc=$?
tail -45 "$out/experiments.log"
echo "experiments rc $rc at $((SECONDS - t0)) s"
left=$((${LIMIT_S:-520} - (SECONDS - t0)))
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
