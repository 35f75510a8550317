#!/usr/bin/env bash
# Device call 1 of the sixty-sixth session (carry .prebuilt .fla .triton-pack; docs/measurements
# moved aside but for this folder, the carry's 64 MiB): GDN's Recompute forward as wy_prep's
# 𝒯-only kernel and the one kernel whose producer forms P (fwd_fused.cuh's PFORM), the default
# where more than 64 V-slices of 64 run. DeltaNet's and GDN's GPU tests (the 40-pair case last:
# both take the one kernel there; the call ends if they hang), memcheck and racecheck on GDN's
# small case under ffwdp, GDN's Recompute ops at the six shapes (default and noffwdp alternating
# twice), the kernels' clock at shapes 0, 1 and 4, GDN's FLA table (FLA in the same call), then
# every GPU test in the time CALL_LIMIT_S leaves.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS; limit=${CALL_LIMIT_S:-560}
export NCCL_NVLS_ENABLE=0
pack() { (cd "$out" && gzip -9 -f san_*.log 2>/dev/null; tar -czf /tmp/c1.tar.gz . && find . -mindepth 1 -delete && mv /tmp/c1.tar.gz all.tar.gz); }
trap pack EXIT
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
grep -E "prebuilt" "$out/build.log" | head -3
timeout 120 build-gpu/tests/gpu_test_delta --gtest_filter="GpuDelta.DeltaNet:GpuDelta.GDN" >"$out/tests_dn_gdn.log" 2>&1
rc=$?
echo "== DeltaNet, GDN tests exit $rc at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$out/tests_dn_gdn.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which|error|no forward" "$out/tests_dn_gdn.log" | head -12
grep -E "T=  256 .*Recompute" "$out/tests_dn_gdn.log" | cut -c1-160
[ $rc -eq 124 ] && { echo "hung: $(grep -E '^\[ RUN' "$out/tests_dn_gdn.log" | tail -1)"; tail -3 "$out/tests_dn_gdn.log"; exit 1; }
for tool in memcheck racecheck; do
  REWY_EXPERIMENTS=ffwdp REWY_GPU_TEST_SMALL=1 timeout 90 compute-sanitizer --tool $tool --error-exitcode 1 \
    build-gpu/tests/gpu_test_delta --gtest_filter="GpuDelta.GDN" >"$out/san_$tool.log" 2>&1
  echo "   $tool exit $? at $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1) $(grep -E '^\[  PASSED|FAILED  \]' "$out/san_$tool.log" | tr '\n' ' ')"
  grep -E "Error|Race|Invalid|Address" "$out/san_$tool.log" | sed -E 's/\+0x[0-9a-f]+//g' | sort | uniq -c | sort -rn | head -6
done
b=build-gpu/bench/bench_delta
ops() {  # ops NAME [VAR=VALUE]
  env ${2:+"$2"} timeout 60 $b --ops gdn --shapes 0,1,2,3,4,5 --policies recompute --gates bench --samples 10 \
    --backward rewy --csv "$out/ops_$1.csv" >"$out/ops_$1.log" 2>&1
  echo "   ops $1 exit $? at $((SECONDS - t0)) s"
}
ops default1; ops noffwdp1 REWY_EXPERIMENTS=noffwdp; ops default2; ops noffwdp2 REWY_EXPERIMENTS=noffwdp
for r in 1 2; do echo "== round $r (default / noffwdp)"; python3 bench/compare_ours.py "$out/ops_noffwdp$r.csv" "$out/ops_default$r.csv"; done
for sh in 0 1 4; do
  REWY_KERNEL_TIMING=2 timeout 40 $b --ops gdn --shapes $sh --policies recompute --gates bench \
    --samples 3 --backward rewy >"$out/phases_$sh.txt" 2>&1
  echo "== shape $sh: the kernels and the producer's phases"
  grep -hE "fwd_fused|wy_prep_tonly" "$out/phases_$sh.txt" | cut -c1-200 | head -6
done
left=$((limit - 130 - (SECONDS - t0)))
if [ $left -ge 90 ]; then
  mkdir -p "$out/table"
  rewy_fla_table "$out/table" "$left" OPS=gdn POLICIES=recompute GATES=bench
  echo "table exit $? at $((SECONDS - t0)) s"
else
  echo "no table ($left s left)"
fi
left=$((limit - 10 - (SECONDS - t0))); [ $left -gt 110 ] && left=110
timeout $left build-gpu/tests/gpu_test_delta >"$out/tests_default.log" 2>&1
echo "== every GPU test (defaults) exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$out/tests_default.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which" "$out/tests_default.log" | head -8
echo "call done at $((SECONDS - t0)) s"
