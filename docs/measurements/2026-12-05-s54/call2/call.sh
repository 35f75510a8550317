#!/usr/bin/env bash
# Device call 2 of the fifty-fourth session (carry .prebuilt .fla .triton-pack): call 1 passed every
# test and both sanitizers on the defaults but FLA's compile (393 s) left no time for the table, and
# its kernel timing found no libraries (the pack's need LD_LIBRARY_PATH, which rewy_device_build sets).
# The four-op FLA table at the defaults, then GDN's kernels alone at (1, 16384, 16), default
# against REWY_EXPERIMENTS=nodcut, at weak and bench gates (OUT/attr.tar.gz).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS; limit=${LIMIT_S:-400}
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build0.log" 200 gpu_test_delta bench_delta delta_accuracy rewy; echo "build exit $? at $((SECONDS - t0)) s"
a=/tmp/attr; mkdir -p $a
b=build-gpu/bench/bench_delta
for set in default nodcut; do
  e=$([ $set = default ] || echo $set)
  for g in weak bench; do
    REWY_KERNEL_TIMING=1 REWY_EXPERIMENTS=$e timeout 40 $b --ops gdn --shapes 3 --policies recompute \
      --gates $g --samples 5 --backward rewy >"$a/kernels_${set}_$g.log" 2>&1
    echo "kernels $set $g exit $? at $((SECONDS - t0)) s"
  done
done
(cd /tmp && tar -czf "$(realpath -m "$out")/attr.tar.gz" attr)
SETS=none VARIANTS=deltanet,gdn,kda,gdn2 OPS=deltanet,gdn,kda,gdn2 OPS_SHAPES=3 OPS_BACKWARD=rewy \
  LIMIT_S=$((limit - (SECONDS - t0))) bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)|cycles:|us/call" /tmp/dd/decide.log | tail -30
[ -f /tmp/dd/table/side_by_side.txt ] && grep -E "^==|geomean" /tmp/dd/table/side_by_side.txt | head -60
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
