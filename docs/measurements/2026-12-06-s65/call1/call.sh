#!/usr/bin/env bash
# Device call 1 of the sixty-fifth session (carry .prebuilt .fla .triton-pack; docs/measurements
# moved aside but for this folder, the carry's 64 MiB): experiment ffwdp
# (fwd_fused.cuh's PFORM: wy_prep's 𝒯-only kernel, then the one kernel whose producer forms P
# alone): DeltaNet's GPU tests under it (the call ends if they hang), memcheck and racecheck on the
# small case, DeltaNet's Recompute ops at the six shapes (default and ffwdp alternating twice), and
# the kernels' clock at shapes 0, 1 and 4, DeltaNet's FLA table under ffwdp (FLA in the same call),
# then every GPU test on the defaults (the sixty-fourth session's last tree never ran on a
# device: its call 5) in the time CALL_LIMIT_S leaves.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS; limit=${CALL_LIMIT_S:-560}
export NCCL_NVLS_ENABLE=0
pack() { (cd "$out" && gzip -9 -f san_*.log 2>/dev/null; tar -czf /tmp/c1.tar.gz . && find . -mindepth 1 -delete && mv /tmp/c1.tar.gz all.tar.gz); }
trap pack EXIT
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
grep -E "prebuilt" "$out/build.log" | head -3
filter=$(rewy_gpu_test_filter deltanet)
REWY_EXPERIMENTS=ffwdp timeout 90 build-gpu/tests/gpu_test_delta --gtest_filter="$filter" >"$out/tests_ffwdp.log" 2>&1
rc=$?
echo "== ffwdp tests exit $rc at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$out/tests_ffwdp.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which|error|no forward" "$out/tests_ffwdp.log" | head -12
[ $rc -eq 124 ] && { echo "hung: $(grep -E '^\[ RUN' "$out/tests_ffwdp.log" | tail -1)"; tail -3 "$out/tests_ffwdp.log"; exit 1; }
for tool in memcheck racecheck; do
  REWY_EXPERIMENTS=ffwdp REWY_GPU_TEST_SMALL=1 timeout 90 compute-sanitizer --tool $tool --error-exitcode 1 \
    build-gpu/tests/gpu_test_delta --gtest_filter="GpuDelta.DeltaNet" >"$out/san_$tool.log" 2>&1
  echo "   $tool exit $? at $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1) $(grep -E '^\[  PASSED|FAILED  \]' "$out/san_$tool.log" | tr '\n' ' ')"
  grep -E "Error|Race|Invalid|Address" "$out/san_$tool.log" | sed -E 's/\+0x[0-9a-f]+//g' | sort | uniq -c | sort -rn | head -6
done
b=build-gpu/bench/bench_delta
ops() {  # ops NAME [VAR=VALUE]
  env ${2:+"$2"} timeout 60 $b --ops deltanet --shapes 0,1,2,3,4,5 --policies recompute --gates bench --samples 10 \
    --backward rewy --csv "$out/ops_$1.csv" >"$out/ops_$1.log" 2>&1
  echo "   ops $1 exit $? at $((SECONDS - t0)) s"
}
ops default1; ops ffwdp1 REWY_EXPERIMENTS=ffwdp; ops default2; ops ffwdp2 REWY_EXPERIMENTS=ffwdp
for r in 1 2; do echo "== round $r (ffwdp / default)"; python3 bench/compare_ours.py "$out/ops_default$r.csv" "$out/ops_ffwdp$r.csv"; done
for sh in 0 1 4; do
  REWY_EXPERIMENTS=ffwdp REWY_KERNEL_TIMING=2 timeout 40 $b --ops deltanet --shapes $sh --policies recompute --gates bench \
    --samples 3 --backward rewy >"$out/phases_ffwdp_$sh.txt" 2>&1
  echo "== shape $sh: the kernels under ffwdp and the producer's phases"
  grep -hE "fwd_fused|wy_prep_tonly" "$out/phases_ffwdp_$sh.txt" | cut -c1-200 | head -6
done
left=$((limit - 130 - (SECONDS - t0)))
if [ $left -ge 90 ]; then
  mkdir -p "$out/table"
  rewy_fla_table "$out/table" "$left" REWY_EXPERIMENTS=ffwdp OPS=deltanet POLICIES=recompute GATES=bench
  echo "table exit $? at $((SECONDS - t0)) s"
else
  echo "no table ($left s left)"
fi
left=$((limit - 10 - (SECONDS - t0))); [ $left -gt 110 ] && left=110
timeout $left build-gpu/tests/gpu_test_delta >"$out/tests_default.log" 2>&1
echo "== every GPU test (defaults) exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$out/tests_default.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which" "$out/tests_default.log" | head -8
echo "call done at $((SECONDS - t0)) s"
