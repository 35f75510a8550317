#!/usr/bin/env bash
# Device call 5 of the fifty-fifth session (carry .prebuilt .fla .triton-pack): the new defaults
# (the segment scan staged, both segment kernels one instantiation a variant, KDA's and GDN2's
# two-pass test first): every GPU test and both sanitizers, then the four-op FLA table, FLA in the
# same call; then ncu's kernel times of DeltaNet's forward at (1, 16384, 16) and KDA's two-pass
# forward there (bench_delta --scan-segments 4 --two-pass-segments) in a process of its own.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build0.log" 280 gpu_test_delta bench_delta delta_accuracy rewy; echo "build exit $?"
DEFAULT_TESTS=1 SETS=none VARIANTS=deltanet,gdn,kda,gdn2 OPS=deltanet,gdn,kda,gdn2 OPS_SHAPES=3 OPS_BACKWARD=rewy \
  LIMIT_S=${LIMIT_S:-470} bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)|cycles:|us/call" /tmp/dd/decide.log | tail -45
b=build-gpu/bench/bench_delta
for run in "deltanet" "kda --scan-segments 4 --two-pass-segments"; do
  echo "== ncu $run (ns) at $((SECONDS - t0)) s"
  timeout 60 ncu --clock-control none --kernel-name regex:"segment_|planes|wy_prep|state_fwd" --launch-skip 12 --launch-count 8 \
    --metrics gpu__time_duration.sum --csv $b --ops $run --shapes 3 --policies recompute --samples 3 --backward rewy 2>&1 |
    grep -E '^"|rror' | awk -F'","' '{print $5, $(NF)}' | sed 's/"//g' | cut -c1-120
done 2>&1 | tee "$out/ncu.txt"
echo "call done at $((SECONDS - t0)) s"
