#!/usr/bin/env bash
# Device call 2 of the fifty-ninth session (carry .prebuilt .fla .triton-pack): two more samples of
# the four-op Recompute table (bench gates) on 7ae6438's kernels, FLA timed in the same call, each
# sample its own FLA process (FLA autotunes afresh in each): how much of call 1's GDN forward 3.00
# (FLA's GDN forward 0.86-0.88 ms at shapes 0-2, against 0.53-0.62 in dce5ee2's call) is FLA's
# variance between processes.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
rewy_device_build "$out/build.log" 30 gpu_test_delta bench_delta delta_accuracy rewy >/dev/null
echo "build exit $? at $((SECONDS - t0)) s"
for i in 1 2; do
  left=$(( ${LIMIT_S:-500} - (SECONDS - t0) ))
  [ "$left" -gt 150 ] || break
  mkdir -p "$out/t$i"
  echo "== sample $i (start at $((SECONDS - t0)) s)"
  POLICIES=recompute GATES=bench rewy_fla_table "$out/t$i" $((left < 240 ? left : 240))
  echo "sample $i exit $? at $((SECONDS - t0)) s"
done
