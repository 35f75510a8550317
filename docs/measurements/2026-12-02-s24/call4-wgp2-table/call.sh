#!/usr/bin/env bash
# s24 call 4: default tests (DeltaNet's wgp1 default), wgp2 experiment (tests, sanitizers, ops A/B), then the FLA table
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
SASS=0 EXPERIMENTS='wgp2' OPS_SHAPES=0,3,4,5 OUT="$out" bash scripts/device-experiments.sh > "$out/experiments.log" 2>&1
rc=$?
tail -30 "$out/experiments.log"
grep -hE "grad_chunk_rewy.*cycles:" "$out/phases.txt" "$out/exp0/phases.txt" | cut -c1-250
echo "experiments rc $rc at $((SECONDS - t0)) s"
rm -rf "$out/exp0/gpucheck.log.bak"
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
