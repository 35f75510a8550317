#!/usr/bin/env bash
# Device call 4 of the forty-fourth session (carry .fla .triton-pack; the pack from call 1 lacks
# KDA's kernels at shapes 4-5): the FLA table at the defaults (c341ac7's kernels; call 1 ran every
# GPU test and both sanitizers on them but had no time left for the table). FLA's kernels compile
# (warm, one process per op) beside our build; the table then runs without its own warm step and
# returns the whole pack. Last, if time is left, GDN's ReWY grad_chunk profiled again with the
# SASS page kept (its shared loads: 6.3M of 13.6M wavefronts are excess, DeltaNet's none; call 3).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out/table"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/bench:$PWD/.fla" TRITON_CACHE_DIR="$PWD/.triton-cache"
python3 bench/triton_cache.py unpack .triton-pack "$TRITON_CACHE_DIR" || echo "no pack"
pids=()
for op in delta gdn kda gdn2; do
  TRITON_CACHE_AUTOTUNING=0 timeout 330 python3 bench/fla_warm.py --ops $op >"$out/fla_warm_$op.log" 2>&1 &
  pids+=($!)
done
rewy_device_build "$out/build.log" 300 bench_delta
echo "build exit $? at $((SECONDS - t0)) s"
for p in "${pids[@]}"; do wait "$p" || echo "FLA warm of one op ended with $?"; done
echo "FLA warm done at $((SECONDS - t0)) s"; tail -qn 1 "$out"/fla_warm_*.log
left=$((${LIMIT_S:-560} - (SECONDS - t0) - 40))
rewy_fla_table "$out/table" "$left" WARM=0 TRITON_PACK=/nonexistent PACK_TRITON=1
echo "table exit $? at $((SECONDS - t0)) s"
mv "$out"/table/triton-cache.tar.xz.* "$out/" 2>/dev/null
if [ -f "$out/table/ours.csv" ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s43/call3/table/ours.csv "$out/table/ours.csv" | tail -12
  python3 bench/side_by_side.py --ours "$out/table/ours.csv" --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
if [ $((SECONDS - t0)) -lt $((${LIMIT_S:-560} - 90)) ]; then
  KERNEL=grad_chunk OP=gdn SHAPE=0 DIRECTION=bwd LINES=30 OUT="$out" timeout 80 bash scripts/profile-source.sh >"$out/prof_grad_chunk_gdn.txt" 2>&1
  echo "profile exit $? at $((SECONDS - t0)) s"; head -6 "$out/prof_grad_chunk_gdn.txt" | cut -c1-300
  rm -f "$out"/source_*.log
fi
(cd "$out" && tar -czf /tmp/all.tar.gz --exclude='triton-cache.tar.xz.*' --exclude='source_*' . && mv /tmp/all.tar.gz . &&
  find . -mindepth 1 ! -name all.tar.gz ! -name 'triton-cache.tar.xz.*' ! -name 'source_*' -delete)
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
