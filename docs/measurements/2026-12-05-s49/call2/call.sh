#!/usr/bin/env bash
# Device call 2 of the forty-ninth session (carry nothing): call 1 ran past the device's 600 s
# before GDN's decay cut was timed or its racecheck ended. Builds gpu_test_delta and bench_delta,
# racechecks dcut on the small case, then times GDN at shapes 2, 3, 5
# (bench gates: the benchmark has no other GDN gates) by default, under seg2p and under dcut, and each kernel under seg2p and dcut at shape 3.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
finish() { (cd "$out" && tar -czf /tmp/call.tar.gz . && find . -mindepth 1 -delete && mv /tmp/call.tar.gz all.tar.gz); }
trap finish EXIT
rewy_device_build "$out/build.log" 280 gpu_test_delta bench_delta
echo "build exit $? at $((SECONDS - t0)) s"
REWY_EXPERIMENTS=dcut REWY_GPU_TEST_SMALL=1 timeout 100 compute-sanitizer --tool racecheck --error-exitcode 1 \
  build-gpu/tests/gpu_test_delta --gtest_filter="$(rewy_gpu_test_filter gdn)" >"$out/san_dcut_racecheck.log" 2>&1
echo "dcut racecheck exit $? at $((SECONDS - t0)) s: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' "$out/san_dcut_racecheck.log" | tr '\n' ' ')"
b=build-gpu/bench/bench_delta
for set in default seg2p dcut; do
  e=$([ $set = default ] || echo $set)
  REWY_EXPERIMENTS=$e timeout 100 $b --ops gdn --shapes 2,3,5 --policies recompute --gates bench \
    --samples 10 --backward rewy --csv "$out/gdn_$set.csv" >"$out/gdn_$set.log" 2>&1
  echo "$set exit $? at $((SECONDS - t0)) s"
done
for set in seg2p dcut; do
  REWY_KERNEL_TIMING=1 REWY_EXPERIMENTS=$set timeout 60 $b --ops deltanet,gdn --shapes 3 --policies recompute \
    --gates bench --samples 5 --backward rewy >"$out/kernels_$set.log" 2>&1
  echo "kernels $set exit $? at $((SECONDS - t0)) s"
done
python3 - "$out" <<'PY'
import csv, sys
def load(f):
    return {(r['op'], r['B'], r['T'], r['H'], r['gates'], r['dir']): float(r['median_ms']) for r in csv.DictReader(open(f))}
base = load(f"{sys.argv[1]}/gdn_default.csv")
for s in ("seg2p", "dcut"):
    d = load(f"{sys.argv[1]}/gdn_{s}.csv")
    for k in sorted(base):
        if k in d: print(s, *k, f"{base[k]:.4f} -> {d[k]:.4f}  {base[k] / d[k]:.3f}x")
PY
echo "call done at $((SECONDS - t0)) s"
