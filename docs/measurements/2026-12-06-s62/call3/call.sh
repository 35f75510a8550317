#!/usr/bin/env bash
# Device call 3 of the sixty-second session (carry .prebuilt .fla .triton-pack; about 450 s):
# DeltaNet's few-pair forward beside wy_prep, with the lead of 16 chunks now its default. The
# beside tests on the defaults and under besidef4 / besidef4pad (the four-CTA wy_prep beside the
# register pass; padded: no wy_prep CTA on the pass's SMs); each kernel alone at shapes 2 and 5
# (REWY_KERNEL_TIMING=1, and =2 for the pass's phases at shape 2); REWY_BESIDE_CLOCK=1 and the
# forward's time for the defaults, noplead, besidef4, besidef4pad and serial; then device-decide
# with those three sets at shapes 2, 3, 5 and the four-op FLA table with the winner.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta delta_accuracy rewy || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
beside='GpuDelta.PrepBesideMatchesSerial:GpuDelta.StalledPrepRaisesInsteadOfHanging:GpuDelta.BesideForwardOnlyWhereGridsRunSideBySide'
for e in default besidef4 besidef4pad; do
  REWY_EXPERIMENTS=${e#default} timeout 90 build-gpu/tests/gpu_test_delta --gtest_filter="$beside" >"$out/tests_beside_$e.log" 2>&1
  echo "== beside tests, $e: exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$out/tests_beside_$e.log" | tr '\n' ' ')"
  grep -E "Failure|Expected|Which" "$out/tests_beside_$e.log" | head -6
done
b=build-gpu/bench/bench_delta
fwd() {  # fwd NAME SHAPES ENV...: DeltaNet's Recompute forward
  env "${@:3}" timeout 60 $b --ops deltanet --shapes "$2" --policies recompute --gates bench --backward rewy \
    --samples 5 --benchmark_filter=fwd >"$out/fwd_$1.txt" 2>&1
}
for sh in 2 5; do
  fwd alone$sh $sh REWY_KERNEL_TIMING=1
  echo "== kernels alone, shape $sh:"; grep -E "us/call" "$out/fwd_alone$sh.txt" | cut -c1-100
done
fwd phases2 2 REWY_KERNEL_TIMING=2
grep -E "cycles:" "$out/fwd_phases2.txt" | cut -c1-200
for e in default noplead besidef4 besidef4pad; do
  fwd clock_$e 2,5 REWY_BESIDE_CLOCK=1 REWY_EXPERIMENTS=${e#default}
  echo "== clock, $e:"; grep "beside clock" "$out/fwd_clock_$e.txt" | awk '{k=$3" "$4" "$5" "$6; last[k]=$0} END {for (k in last) print last[k]}' | sort | cut -c14-330
done
for e in default noplead besidef4 besidef4pad serial; do
  if [ $e = serial ]; then fwd time_$e 2,5 REWY_SERIAL_FORWARD=1; else fwd time_$e 2,5 REWY_EXPERIMENTS=${e#default}; fi
  echo "== forward ms, $e: $(grep -oE '^[a-z0-9]+/fwd/shape[0-9]|median_ms=[0-9.]+' "$out/fwd_time_$e.txt" | paste -sd' ' | sed 's/ median_ms=/=/g')"
done
echo "diagnostics done at $((SECONDS - t0)) s"
SETS='noplead@deltanet besidef4@deltanet besidef4pad@deltanet' NOSAN='noplead besidef4 besidef4pad' VARIANTS=deltanet,gdn,kda,gdn2 \
  PICK_DIRECTION=fwd OPS_SHAPES=2,3,5 OPS_BACKWARD=rewy LIMIT_S=$((570 - (SECONDS - t0))) bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)|cycles:|us/call" /tmp/dd/decide.log | tail -42
echo "call done at $((SECONDS - t0)) s"
