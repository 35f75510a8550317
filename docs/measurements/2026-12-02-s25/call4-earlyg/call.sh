#!/usr/bin/env bash
# s25 call 4 (about 370 s of device time left): experiment earlyg (KDA's wy_prep_split with the
# second slice's gates loaded and scanned with the first's). Build two targets, KDA's GPU tests with
# it, whole KDA ops default / earlyg, its phases.
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
source scripts/common.sh
export NCCL_NVLS_ENABLE=0
{ rewy_configure build-gpu -DREWY_CUDA=ON >/dev/null && timeout 255 bash -c 'source scripts/common.sh; rewy_build build-gpu gpu_test_delta bench_delta'; } > "$out/build.log" 2>&1
rc=$?; echo "build rc $rc at $((SECONDS - t0)) s"; tail -3 "$out/build.log"
[ $rc -eq 0 ] || exit $rc
f='GpuDelta.KDA:GpuDelta.ChannelGatesRealisticAndOutOfRange:GpuDelta.MisalignedInputViews'
REWY_EXPERIMENTS=earlyg timeout 90 build-gpu/tests/gpu_test_delta --gtest_filter="$f" > "$out/tests_earlyg.log" 2>&1
rc=$?; echo "tests (earlyg) rc $rc at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED)|FAILED|OK \]" "$out/tests_earlyg.log" | head -12
[ $rc -eq 0 ] || exit $rc
b=build-gpu/bench/bench_delta
run() { env "$@" timeout 60 $b --ops kda --shapes 0,3,4,5 --policies recompute,save --gates bench --samples 10 --backward rewy --csv "$csv" >/dev/null 2>&1; }
csv=$out/ops_default.csv run X=1; csv=$out/ops_earlyg.csv run REWY_EXPERIMENTS=earlyg
echo "ops at $((SECONDS - t0)) s"
python3 bench/compare_ours.py "$out/ops_default.csv" "$out/ops_earlyg.csv"
REWY_KERNEL_TIMING=2 timeout 40 $b --ops kda --shapes 0 --policies recompute --gates bench --samples 3 > "$out/phases_default.txt" 2>&1
REWY_EXPERIMENTS=earlyg REWY_KERNEL_TIMING=2 timeout 40 $b --ops kda --shapes 0 --policies recompute --gates bench --samples 3 > "$out/phases_earlyg.txt" 2>&1
grep -hE "wy_prep_split.*(cycles:|us/call)" "$out/phases_default.txt" "$out/phases_earlyg.txt" | cut -c1-260
echo "done at $((SECONDS - t0)) s"
