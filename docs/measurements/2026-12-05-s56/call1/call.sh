#!/usr/bin/env bash
# Device call 1 of the fifty-sixth session (carry .prebuilt .fla .triton-pack): the defaults of
# dce5ee2 (the staged segment scan; both segment kernels one instantiation a variant): every GPU
# test and both sanitizers (a log with findings now kept whole in all.tar.gz), the four-op FLA
# table with FLA in the same call, phases at shape 0; then racecheck again on DeltaNet's small run
# (the fifty-fifth session's call 5 reported one hazard in its state_bwd_wg_kernel) while time is left.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
DEFAULT_TESTS=1 SETS=none VARIANTS=deltanet,gdn,kda,gdn2 OPS_SHAPES=3 OPS_BACKWARD=rewy LIMIT_S=${LIMIT_S:-470} \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)|cycles:|us/call" /tmp/dd/decide.log | tail -45
rewy_device_build /tmp/rebuild.log 30 gpu_test_delta >/dev/null  # (the pack's libraries on LD_LIBRARY_PATH again)
# Each kernel alone at the many-pair shape where DeltaNet's backward is worst, (8, 4096, 32).
[ $((SECONDS - t0)) -lt 480 ] && REWY_KERNEL_TIMING=1 timeout 40 build-gpu/bench/bench_delta --ops deltanet,gdn --shapes 4 \
  --policies recompute --gates bench --backward rewy --samples 3 >"$out/kernels_shape4.txt" 2>&1 &&
  grep -E "us/call" "$out/kernels_shape4.txt" | cut -c1-150
for i in 1 2 3; do
  [ $((SECONDS - t0)) -lt 500 ] || break
  log="$out/race_$i.log"
  REWY_GPU_TEST_SMALL=1 timeout 70 compute-sanitizer --tool racecheck --error-exitcode 1 build-gpu/tests/gpu_test_delta \
    --gtest_filter="$(rewy_gpu_test_filter deltanet)" >"$log" 2>&1
  echo "racecheck $i exit $? at $((SECONDS - t0)) s: $(grep -E 'RACECHECK SUMMARY' "$log" | tail -1)" | tee -a "$out/race.txt"
  if grep -q "RACECHECK SUMMARY: 0 hazards" "$log"; then rm -f "$log"; else gzip -9 "$log"; fi
done
echo "call done at $((SECONDS - t0)) s"
