#!/usr/bin/env bash
# Device call 4 of the sixty-second session (carry .prebuilt; about 250 s): the session's defaults
# (wy_prep's lead of 16 chunks beside DeltaNet's forward pass). Every GPU test, memcheck on
# DeltaNet's small case, then the SM clock and power (nvidia-smi every 50 ms) while DeltaNet's
# forward at (1, 32768, 32) runs serial and beside wy_prep: is the pass's slower step beside
# wy_prep (2.1 against 1.7 us, call 3) the clock?
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
timeout 150 build-gpu/tests/gpu_test_delta >"$out/tests_default.log" 2>&1
echo "== every GPU test exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|^\[  SKIPPED' "$out/tests_default.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which" "$out/tests_default.log" | head -10
REWY_GPU_TEST_SMALL=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/gpu_test_delta \
  --gtest_filter="$(rewy_gpu_test_filter deltanet)" >"$out/memcheck.log" 2>&1
echo "== memcheck exit $? at $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)"
gzip -9 "$out/memcheck.log"
for mode in serial beside; do
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader -lms 50 >"$out/smi_$mode.csv" 2>&1 &
  smi=$!
  sleep 1
  env $([ $mode = serial ] && echo REWY_SERIAL_FORWARD=1) timeout 60 build-gpu/bench/bench_delta --ops deltanet --shapes 5 \
    --policies recompute --gates bench --backward rewy --samples 400 --benchmark_filter=fwd >"$out/fwd_$mode.txt" 2>&1
  kill $smi; wait $smi 2>/dev/null
  echo "== $mode: $(grep -oE 'median_ms=[0-9.]+' "$out/fwd_$mode.txt")"
  python3 - "$out/smi_$mode.csv" <<'PY'
import statistics, sys
rows = [r.split(", ") for r in open(sys.argv[1]) if r.count(",") >= 4]
sm = [float(r[1].split()[0]) for r in rows if r[1].split()[0].replace(".", "").isdigit()]
w = [float(r[3].split()[0]) for r in rows if r[3].split()[0].replace(".", "").isdigit()]
if sm and len(sm) == len(w):
    busy = [(c, p) for c, p in zip(sm, w) if p >= 0.5 * max(w)]  # (the samples while the forwards run)
    c = [x for x, _ in busy]
    print(f"   busy samples {len(busy)} of {len(sm)}: SM clock MHz min {min(c):.0f} median {statistics.median(c):.0f} "
          f"max {max(c):.0f}; power W median {statistics.median([p for _, p in busy]):.0f} max {max(w):.0f}")
PY
done
echo "call done at $((SECONDS - t0)) s"
