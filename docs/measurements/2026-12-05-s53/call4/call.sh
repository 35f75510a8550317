#!/usr/bin/env bash
# Device call 4 of the fifty-third session (carry .prebuilt): too little device time was left for
# a build (about 280 s, a fresh machine's start included), so gpu_test_delta was built on the
# workstation (nvcc 13.0, -gencode=arch=compute_90a,code=sm_90a, Release, at this commit) and
# carried gzipped in the git-ignored .prebuilt/: every delta GPU test on the new defaults (GDN's
# decay cut on both passes), then memcheck and racecheck on GDN's tests at the small case while
# time is left (LIMIT_S, default 150).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS; limit=${LIMIT_S:-150}
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
bin=/tmp/gpu_test_delta
gunzip -c .prebuilt/gpu_test_delta.gz >$bin && chmod +x $bin
ldd $bin | grep -E "not found" && { echo "a library is missing"; exit 3; }
nvidia-smi --query-gpu=name --format=csv,noheader
timeout $((limit - 10 - (SECONDS - t0))) $bin >"$out/tests_default.log" 2>&1
echo "tests exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|SKIPPED \]' "$out/tests_default.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which" "$out/tests_default.log" | head -20
filter=$(rewy_gpu_test_filter gdn)
for tool in memcheck racecheck; do
  left=$((limit - 5 - (SECONDS - t0)))
  [ $left -gt 15 ] || { echo "$tool: skipped ($left s left)"; continue; }
  REWY_GPU_TEST_SMALL=1 timeout $left compute-sanitizer --tool $tool --error-exitcode 1 \
    $bin --gtest_filter="$filter" >"$out/san_gdn_$tool.log" 2>&1
  echo "$tool exit $? at $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$out/san_gdn_$tool.log" | tr '\n' ' ')"
done
echo "call done at $((SECONDS - t0)) s"
