#!/usr/bin/env bash
# Device call 1 of the thirty-third session (carry .fla .triton-pack): the beside forward as the
# default. Every GPU test and both sanitizers (device-decide DEFAULT_TESTS=1), DeltaNet's
# same-input accuracy cases 1000:h0 and 4096:h0 beside them, the sanitizer's environment; the set
# fwdlap128 judged by the forward at shapes 1, 2, 3, 5 and the FLA table with the winner; then the
# forward and backward with --serial-forward (bench/compare_ours.py serial -> default: above 1
# beside wins) and one memcheck run without REWY_SERIAL_FORWARD.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build0.log" 300 gpu_test_delta bench_delta delta_accuracy rewy || { tail -5 "$out/build0.log"; exit 1; }
echo "built at $((SECONDS - t0)) s"
export PYTHONPATH=$PWD/bench:$PWD/.fla TRITON_CACHE_DIR=$PWD/.triton-cache PYTHONUNBUFFERED=1
python3 bench/triton_cache.py unpack .triton-pack "$TRITON_CACHE_DIR" >/dev/null
rm -f /tmp/acc.done
(
  for c in 1000:h0 4096:h0; do
    OPENBLAS_NUM_THREADS=1 TRITON_CACHE_AUTOTUNING=0 timeout 280 python3 bench/accuracy_vs_fla.py --rewy build-gpu/rewy \
      --ops delta --cases $c --H 16 --seeds 1 --work /tmp/acc-$c >"$out/acc_delta_${c/:/_}.log" 2>&1 &
  done
  wait; touch /tmp/acc.done
) &
compute-sanitizer --tool memcheck env 2>&1 | grep -E "^(CUDA_INJECTION64_PATH|LD_PRELOAD)=" >"$out/sanitizer_env.txt"
HOLD_TIMING_UNTIL=/tmp/acc.done DEFAULT_TESTS=1 SETS=fwdlap128 NOSAN=fwdlap128 PICK_DIRECTION=fwd \
  VARIANTS=deltanet,gdn,kda,gdn2 OPS_SHAPES=1,2,3,5 OPS_POLICIES=recompute,save OPS_BACKWARD=rewy LIMIT_S=470 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"; grep -vE "^ *(memcheck|racecheck) exit" "$out/decide.log" | tail -45
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd
OPS_VARIANTS=deltanet,gdn,kda,gdn2 OPS_SHAPES=1,2,3,5 OPS_POLICIES=recompute,save OPS_BACKWARD=rewy OPS_ARGS=--serial-forward \
  rewy_ops_csv build-gpu/bench/bench_delta "$out/ops_serial.csv"
python3 bench/compare_ours.py "$out/ops_serial.csv" /tmp/dd/ops_default.csv | tee "$out/beside_vs_serial.txt"
grep -hE "SAME|above|worst|draws" /tmp/dd/acc_delta_*.log | tail -8; cut -c1-120 /tmp/dd/sanitizer_env.txt
REWY_GPU_TEST_SMALL=1 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/gpu_test_delta \
  --gtest_filter=GpuDelta.DeltaNet >"$out/memcheck_noserial.log" 2>&1
echo "memcheck without REWY_SERIAL_FORWARD: exit $? at $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$out/memcheck_noserial.log" | tr '\n' ' ')"
echo "done at $((SECONDS - t0)) s"
