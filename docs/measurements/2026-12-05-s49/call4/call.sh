#!/usr/bin/env bash
# Device call 4 of the forty-ninth session (prepared, not run: no machine was lent for the
# session's last 389 s of device time, and one failed start left too little for a build). Carry
# nothing. The decay cut's look-back (0fac2f0's kernels): builds gpu_test_delta and bench_delta,
# times GDN at shapes 2, 3, 5 at bench and weak gates by default and under dcut, then runs
# GpuDelta.SegmentScanForward (every form; the decay cut at weak decay too). No sanitizers (time):
# about 5 minutes with a fresh machine's build.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
rewy_device_build "$out/build.log" 250 gpu_test_delta bench_delta
echo "build exit $? at $((SECONDS - t0)) s"
b=build-gpu/bench/bench_delta
for set in default dcut; do
  e=$([ $set = default ] || echo $set)
  REWY_EXPERIMENTS=$e timeout 40 $b --ops gdn --shapes 2,3,5 --policies recompute --gates bench,weak \
    --samples 10 --backward rewy --csv "$out/gdn_$set.csv" >/dev/null 2>&1
  echo "$set exit $? at $((SECONDS - t0)) s"
done
python3 - "$out" <<'PY'
import csv, sys
def load(f):
    return {(r['B'], r['T'], r['H'], r['gates'], r['dir']): float(r['median_ms']) for r in csv.DictReader(open(f))}
base, cut = load(f"{sys.argv[1]}/gdn_default.csv"), load(f"{sys.argv[1]}/gdn_dcut.csv")
for k in sorted(base):
    if k in cut: print("gdn", *k, f"{base[k]:.4f} -> {cut[k]:.4f}  {base[k] / cut[k]:.3f}x")
PY
timeout 100 build-gpu/tests/gpu_test_delta --gtest_filter='GpuDelta.SegmentScanForward' >"$out/test_segments.log" 2>&1
echo "SegmentScanForward exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$out/test_segments.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which" "$out/test_segments.log" | head -10
grep -E "decay cut" "$out/test_segments.log" | head -12
echo "call done at $((SECONDS - t0)) s"
