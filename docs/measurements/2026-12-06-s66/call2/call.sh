#!/usr/bin/env bash
# Device call 2 of the sixty-sixth session (carry .prebuilt .fla .triton-pack; docs/measurements
# moved aside but for this session's folder): the one-kernel forward's producer with P out by one
# TMA store a whole chunk and its small inputs (β of the rows, GDN's log-decays) read a chunk
# ahead. First every GPU test on the defaults (the call ends if they fail or hang), memcheck and
# racecheck on DeltaNet's and GDN's small case under ffwdp, and the producer's clock at shape 0
# (DeltaNet's default, GDN's under ffwdp:gdn); then scripts/device-decide.sh with the set
# ffwdpg@gdn (GDN's one kernel by DeltaNet's rule, more than 64 V-slices of 64) picked by the
# forward (GDN's tests under it; its sanitizers are the runs above under ffwdp: NOSAN),
# ops against the defaults, and the four-op FLA table with the winner, FLA in the same call.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS; limit=${CALL_LIMIT_S:-560}
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta delta_accuracy rewy || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
grep -E "prebuilt" "$out/build.log" | head -3
keep=/tmp/c2keep; mkdir -p $keep; cp "$out/build.log" $keep/
timeout 150 build-gpu/tests/gpu_test_delta >"$keep/tests_default.log" 2>&1
rc=$?
echo "== every GPU test exit $rc at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$keep/tests_default.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which|no forward" "$keep/tests_default.log" | head -8
if [ $rc -ne 0 ]; then
  echo "stopped: $(grep -E '^\[ RUN' "$keep/tests_default.log" | tail -1)"
  (cd $keep && tar -czf "$out/all.tar.gz" .); exit 1
fi
for tool in memcheck racecheck; do
  REWY_EXPERIMENTS=ffwdp REWY_GPU_TEST_SMALL=1 timeout 90 compute-sanitizer --tool $tool --error-exitcode 1 \
    build-gpu/tests/gpu_test_delta --gtest_filter="GpuDelta.DeltaNet:GpuDelta.GDN" >"$keep/san_ffwdp_$tool.log" 2>&1
  echo "   ffwdp $tool exit $? at $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$keep/san_ffwdp_$tool.log" | tail -1) $(grep -E '^\[  PASSED|FAILED  \]' "$keep/san_ffwdp_$tool.log" | tr '\n' ' ')"
  grep -E "Error: |Race reported" "$keep/san_ffwdp_$tool.log" | sed -E 's/\+0x[0-9a-f]+//g; s/\(rewy::delta[^)]*\)//g' | sort | uniq -c | sort -rn | head -8
done
gzip -9 -f $keep/san_ffwdp_*.log
b=build-gpu/bench/bench_delta
for sh in 0; do
  for cfg in deltanet: gdn:ffwdp:gdn; do
    op=${cfg%%:*}; ex=${cfg#*:}
    env ${ex:+REWY_EXPERIMENTS=$ex} REWY_KERNEL_TIMING=2 timeout 40 $b --ops $op --shapes $sh --policies recompute --gates bench \
      --samples 3 --backward rewy >"$keep/phases_${op}_$sh.txt" 2>&1
    echo "== shape $sh, $op ${ex:-default}: the kernels and the producer's phases"
    grep -hE "fwd_fused|wy_prep|state_fwd" "$keep/phases_${op}_$sh.txt" | grep -v "^ *wy_prep.*bwd" | cut -c1-200 | head -8
  done
done
left=$((limit - 15 - (SECONDS - t0)))
echo "device-decide with LIMIT_S=$left at $((SECONDS - t0)) s"
SETS='ffwdpg@gdn' NOSAN=ffwdpg PICK_DIRECTION=fwd VARIANTS=${DECIDE_VARIANTS:-deltanet,gdn,kda,gdn2} OPS_SHAPES=0,1,3,4,5 OPS_BACKWARD=rewy \
  SETS_UNTIL_S=$((left > 240 ? left - 200 : 40)) LIMIT_S=$left bash scripts/device-decide.sh >"$keep/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd2 && tar -xzf "$out/all.tar.gz" -C /tmp/dd2 2>/dev/null; cp $keep/* /tmp/dd2/ && (cd /tmp/dd2 && tar -czf "$out/all.tar.gz" .)
grep -E "^==|geomean|min |table|done|prebuilt|pick|PASSED|FAILED|SUMMARY" /tmp/dd2/decide.log | head -40
[ -f /tmp/dd2/table/side_by_side.txt ] && grep -E "^==|geomean|min " /tmp/dd2/table/side_by_side.txt | head -60
echo "call done at $((SECONDS - t0)) s"
