#!/usr/bin/env bash
# Device call 4 of the fifty-fourth session (carry .prebuilt .fla .triton-pack): the decay cut's
# plan with its loads batched and its two walks in blocks of their own (call 3's ncu: the plan took
# 25 us a forward and 46 us a backward at (1, 16384, 16), H100, at either gates). Every delta GPU
# test, memcheck and racecheck on GDN's small case, the plan's kernel time by ncu, GDN's op times
# (default and nodcut, bench and weak gates) and GDN's FLA table (FLA timed in this call).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS; limit=${LIMIT_S:-560}
export NCCL_NVLS_ENABLE=0
finish() { (cd "$out" && tar -czf /tmp/call.tar.gz . && find . -mindepth 1 -delete && mv /tmp/call.tar.gz all.tar.gz); }
trap finish EXIT
rewy_device_build "$out/build.log" 280 gpu_test_delta bench_delta delta_accuracy rewy
echo "build exit $? at $((SECONDS - t0)) s: $(grep prebuilt: "$out/build.log")"
timeout 200 build-gpu/tests/gpu_test_delta >"$out/tests.log" 2>&1
echo "tests exit $? at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]|SKIPPED \]' "$out/tests.log" | tr '\n' ' ')"
grep -E "Failure|Expected|Which|error" "$out/tests.log" | head -20
filter=$(rewy_gpu_test_filter gdn)
for tool in racecheck memcheck; do
  REWY_GPU_TEST_SMALL=1 timeout 90 compute-sanitizer --tool $tool --error-exitcode 1 \
    build-gpu/tests/gpu_test_delta --gtest_filter="$filter" >/tmp/san_$tool.log 2>&1
  echo "$tool exit $? at $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' /tmp/san_$tool.log | tr '\n' ' ')"
  grep -E "Error|hazard" /tmp/san_$tool.log | sort | uniq -c | sort -rn | head -5
done
b=build-gpu/bench/bench_delta
for g in weak bench; do
  timeout 60 ncu --clock-control none --kernel-name regex:decay_cut_plan --launch-skip 4 --launch-count 8 \
    --metrics gpu__time_duration.sum --csv $b --ops gdn --shapes 3 --policies recompute --gates $g --samples 3 \
    --backward rewy 2>/dev/null | grep -E '^"' | awk -F'","' '{print $5, $(NF)}' | sed 's/"//g' >"$out/ncu_plan_$g.txt"
  echo "plan ($g, ns): $(tail -n +2 "$out/ncu_plan_$g.txt" | awk '{print $NF}' | tr '\n' ' ')"
done
for set in default nodcut; do
  e=$([ $set = default ] || echo $set)
  REWY_EXPERIMENTS=$e timeout 120 $b --ops gdn --shapes 0,1,2,3,4,5 --policies recompute --gates bench,weak \
    --samples 30 --backward rewy --csv "$out/gdn_$set.csv" >/tmp/gdn_$set.log 2>&1
  echo "gdn $set exit $? at $((SECONDS - t0)) s"
done
python3 - "$out" <<'PY'
import csv, sys
def load(f):
    return {(r['op'], r['B'], r['T'], r['H'], r['gates'], r['dir']): float(r['median_ms']) for r in csv.DictReader(open(f))}
base, d = load(f"{sys.argv[1]}/gdn_nodcut.csv"), load(f"{sys.argv[1]}/gdn_default.csv")
for k in sorted(base):
    if k in d: print("nodcut -> default", *k, f"{base[k]:.4f} -> {d[k]:.4f}  {base[k] / d[k]:.3f}x")
PY
left=$((limit - (SECONDS - t0)))
if [ $left -gt 120 ]; then
  mkdir -p "$out/table"
  rewy_fla_table "$out/table" $((left - 10)) OPS=gdn
  echo "table exit $? at $((SECONDS - t0)) s"
else
  echo "table: skipped ($left s left)"
fi
echo "call done at $((SECONDS - t0)) s"
