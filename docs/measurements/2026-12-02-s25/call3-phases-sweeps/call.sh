#!/usr/bin/env bash
# s25 call 3: default tests; phases at shapes 0 and 3 with the finer wy_prep_split / grad_chunk p4
# breakdown; sweeps of the overlap switches at all six shapes.
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
SASS=0 EXPERIMENTS='-' PHASE_SHAPES=0,3 OPS_SHAPES=0,1,2,3,4,5 SWEEPS="${SWEEPS:---serial-grad|--serial-state-passes}" \
  OUT="$out" bash scripts/device-experiments.sh > "$out/experiments.log" 2>&1
rc=$?
tail -40 "$out/experiments.log"
echo "experiments rc $rc at $((SECONDS - t0)) s"
grep -hE "(wy_prep_split|grad_chunk_rewy)<.*cycles:" "$out/phases.txt" "$out/phases_s3.txt" | cut -c1-300
(cd "$out" && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz .)
ls -la "$out"
