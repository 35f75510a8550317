#!/usr/bin/env bash
# Device call 4 of the forty-fifth session (carry .fla .triton-pack): the FLA table at the session's
# last kernels (GDN's fused wy_prep with one exponential for P's and A's entry; its shared kernel,
# which runs beside the state pass, back to two passes after call 3's 0.93x at 32 pairs). Every
# kernel's SASS is one that call 1 or call 3 ran every GPU test and both sanitizers on (checked
# here with scripts/sass.py same); GDN's GPU tests run once more before the table.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out/table"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 260 bench_delta gpu_test_delta
echo "build exit $? at $((SECONDS - t0)) s"
timeout 60 build-gpu/tests/gpu_test_delta --gtest_filter="$(rewy_gpu_test_filter gdn)" >"$out/tests_gdn.log" 2>&1
echo "gdn tests exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  (PASSED|FAILED)' "$out/tests_gdn.log" | tr '\n' ' ')"
left=$((${LIMIT_S:-470} - (SECONDS - t0) - 15))
rewy_fla_table "$out/table" "$left"
echo "table exit $? at $((SECONDS - t0)) s"
if [ -f "$out/table/ours.csv" ]; then
  python3 bench/compare_ours.py docs/measurements/2026-12-04-s45/call1/table/ours.csv "$out/table/ours.csv" | tail -14
  python3 bench/side_by_side.py --ours "$out/table/ours.csv" --fla .fla/fla-h200.csv 2>&1 | grep -E "geomean|min|==" | head -40
fi
(cd "$out" && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz .)
echo "call done at $((SECONDS - t0)) s"
