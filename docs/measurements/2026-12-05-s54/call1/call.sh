#!/usr/bin/env bash
# Device call 1 of the fifty-fourth session (carry .prebuilt .fla; no .triton-pack: the checkout
# was new, so FLA's kernels compile beside the tests and come back as OUT/triton-cache.tar.xz.NN).
# GDN's decay cut on both passes has been the default since 2454183: every delta GPU test and both
# sanitizers on the defaults, then the FLA table of all four ops (the new table of record; it runs
# only with 140 s left after FLA's compile). Then, in the time left, where the decay cut's fallback
# pays its cost at weak decay: each kernel's time alone (REWY_KERNEL_TIMING=1) for GDN at
# (1, 16384, 16), default against REWY_EXPERIMENTS=nodcut, into OUT/attr.tar.gz.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS; limit=${LIMIT_S:-575}
export NCCL_NVLS_ENABLE=0
FLA_COMPILE=1 DEFAULT_TESTS=1 SETS=none VARIANTS=deltanet,gdn,kda,gdn2 OPS=deltanet,gdn,kda,gdn2 OPS_SHAPES=3 \
  OPS_BACKWARD=rewy LIMIT_S=$((limit - 40)) bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)" /tmp/dd/decide.log | tail -50
[ -f /tmp/dd/table/side_by_side.txt ] && grep -E "^==|geomean" /tmp/dd/table/side_by_side.txt | head -60
a=/tmp/attr; mkdir -p $a
b=build-gpu/bench/bench_delta
for set in default nodcut; do
  left=$((limit - 12 - (SECONDS - t0)))
  [ $left -gt 15 ] || { echo "kernels $set: skipped ($left s left)"; continue; }
  e=$([ $set = default ] || echo $set)
  for g in weak bench; do
    REWY_KERNEL_TIMING=1 REWY_EXPERIMENTS=$e timeout $((left / 2)) $b --ops gdn --shapes 3 --policies recompute \
      --gates $g --samples 5 --backward rewy >"$a/kernels_${set}_$g.log" 2>&1
    echo "kernels $set $g exit $? at $((SECONDS - t0)) s"
  done
done
(cd /tmp && tar -czf "$(realpath -m "$out")/attr.tar.gz" attr)
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
