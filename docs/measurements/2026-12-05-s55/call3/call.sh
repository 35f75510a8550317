#!/usr/bin/env bash
# Device call 3 of the fifty-fifth session (carry .prebuilt .fla .triton-pack). Experiment segpf:
# the two-pass form's scan over segments with each map staged in shared memory a segment ahead,
# and its correction O += Y H_in with Y copied a chunk ahead (ncu, H100, fifty-fourth session:
# scan 24 µs, correction 60 µs at (1, 16384, 16), against about 35 µs of bytes for the
# correction). DeltaNet's forward takes the two-pass form at (1, 16384, 16), GDN's at weak decay
# (the decay cut's fallback); KDA's and GDN2's only under kseg2p (0.91-0.97x there, fifty-third
# session), timed here with segpf. Tests and sanitizers under each set, ops at shape 3 at both
# gates, then ncu's kernel times for the forward with and without the set.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build0.log" 280 gpu_test_delta bench_delta delta_accuracy rewy; echo "build exit $?"
SETS='segpf@deltanet,gdn kseg2p,segpf@kda,gdn2' VARIANTS=deltanet,gdn,kda,gdn2 OPS=deltanet,gdn,kda,gdn2 OPS_SHAPES=3 \
  OPS_GATES=bench,weak OPS_BACKWARD=rewy PICK_DIRECTION=fwd TABLE=0 LIMIT_S=${LIMIT_S:-400} \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)|cycles:|us/call" /tmp/dd/decide.log | tail -40
b=build-gpu/bench/bench_delta
ncu_times() {  # op gates experiments
  REWY_EXPERIMENTS=$3 timeout 100 ncu --clock-control none --kernel-name regex:"segment_|planes|wy_prep|state_fwd" \
    --launch-skip 12 --launch-count 12 --metrics gpu__time_duration.sum --csv $b --ops $1 --shapes 3 \
    --policies recompute --gates $2 --samples 3 --backward rewy 2>&1 | grep -E '^"' | awk -F'","' '{print $5, $(NF)}' |
    sed 's/"//g' | sed -E 's/\(DeltaParams\)|\(SegmentScanParams\)|\(DeltaParams, int\)//' | cut -c1-120
}
for run in "deltanet bench -" "deltanet bench segpf" "gdn weak -" "gdn weak segpf" "kda bench kseg2p" "kda bench kseg2p,segpf"; do
  set -- $run
  e=$([ "$3" = - ] || echo "$3")
  echo "== ncu $1 $2 gates, REWY_EXPERIMENTS='$e' (ns) at $((SECONDS - t0)) s"
  ncu_times "$1" "$2" "$e"
done 2>&1 | tee "$out/ncu.txt"
echo "call done at $((SECONDS - t0)) s"
