#!/usr/bin/env bash
# Device call 2 of the sixty-second session (carry .prebuilt .fla .triton-pack; about 450 s):
# where the few-pair forward beside wy_prep loses its time, and experiment preplead (wy_prep held
# to at most n chunks ahead of the pass, so that what it reads and writes is still in L2 when the
# pass reads it). First the beside tests on the defaults and under REWY_PREP_LEAD=8; then
# REWY_BESIDE_CLOCK=1 (the pass's and wy_prep's spans, the pass's flag waits) at shapes 2 and 5
# for leads 0, 4, 8, 16, 32, and the forward's time (no clock) at those leads and serial; then
# device-decide with sets preplead8 and preplead16 (DeltaNet, KDA, GDN2: the beside forwards) at
# shapes 2, 3, 5 against the defaults, and the four-op FLA table with the winner.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta delta_accuracy rewy || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
beside='GpuDelta.PrepBesideMatchesSerial:GpuDelta.StalledPrepRaisesInsteadOfHanging:GpuDelta.BesideForwardOnlyWhereGridsRunSideBySide'
for lead in 0 8 3; do
  REWY_PREP_LEAD=$lead timeout 90 build-gpu/tests/gpu_test_delta --gtest_filter="$beside" >"$out/tests_beside_lead$lead.log" 2>&1
  echo "== beside tests, lead $lead: exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$out/tests_beside_lead$lead.log" | tr '\n' ' ')"
  grep -E "Failure|Expected|Which" "$out/tests_beside_lead$lead.log" | head -6
done
b=build-gpu/bench/bench_delta
run() {  # run NAME ENV...: the Recompute forward of the beside ops at shapes 2 and 5
  env "${@:2}" timeout 60 $b --ops deltanet,gdn,kda,gdn2 --shapes 2,5 --policies recompute --gates bench --backward rewy \
    --samples 5 --benchmark_filter=fwd >"$out/fwd_$1.txt" 2>&1
}
for lead in 0 4 8 16 32; do
  run clock$lead REWY_BESIDE_CLOCK=1 REWY_PREP_LEAD=$lead
  echo "== clock, lead $lead (exit $?): last line a shape"
  grep "beside clock" "$out/fwd_clock$lead.txt" | awk '{k=$3" "$4" "$5" "$6; last[k]=$0} END {for (k in last) print last[k]}' | sort | cut -c14-330
done
for lead in 0 4 8 16 32 serial; do
  if [ $lead = serial ]; then run serial REWY_SERIAL_FORWARD=1; else run lead$lead REWY_PREP_LEAD=$lead; fi
  echo "== forward ms, ${lead}: $(grep -oE '^[a-z0-9]+/fwd/shape[0-9]|median_ms=[0-9.]+' "$out/fwd_$lead.txt" | paste -sd' ' | sed 's/ median_ms=/=/g')"
done
echo "diagnostics done at $((SECONDS - t0)) s"
SETS='preplead8@deltanet,kda,gdn2 preplead16@deltanet,kda,gdn2' NOSAN='preplead8 preplead16' VARIANTS=deltanet,gdn,kda,gdn2 \
  PICK_DIRECTION=fwd OPS_SHAPES=2,3,5 OPS_BACKWARD=rewy LIMIT_S=$((570 - (SECONDS - t0))) bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)|cycles:|us/call" /tmp/dd/decide.log | tail -45
echo "call done at $((SECONDS - t0)) s"
