#!/usr/bin/env bash
# Device call 3 of the fifty-fourth session (carry .prebuilt): where GDN's decay cut pays its cost
# at weak decay (forward ~30 us, backward ~65 us at (1, 16384, 16) against REWY_EXPERIMENTS=nodcut,
# fifty-third session). REWY_KERNEL_TIMING runs kernels one at a time, so it cannot see launch
# gaps nor lost overlap: this traces the real pipeline with Nsight Systems (default, nodcut) and
# writes each kernel's start and end (OUT/trace_*.csv.gz).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
rewy_device_build "$out/build.log" 200 bench_delta; echo "build exit $? at $((SECONDS - t0)) s"
nsys=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/*/bin/nsys /usr/lib/nsight-systems/bin/nsys 2>/dev/null | head -1)
echo "nsys: ${nsys:-none}"; [ -n "$nsys" ] || { ls /usr/local/cuda/bin | tr '\n' ' '; exit 1; }
b=build-gpu/bench/bench_delta
for set in default nodcut; do
  e=$([ $set = default ] || echo $set)
  for g in weak bench; do
    REWY_EXPERIMENTS=$e timeout 120 "$nsys" profile -t cuda -f true -o /tmp/tr_${set}_$g $b --ops gdn --shapes 3 \
      --policies recompute --gates $g --samples 10 --backward rewy >"/tmp/nsys_${set}_$g.log" 2>&1
    echo "nsys $set $g exit $? at $((SECONDS - t0)) s: $(grep -E "median_ms" "/tmp/nsys_${set}_$g.log" | sed -E 's/ +/ /g' | cut -c1-160 | tr '\n' ' ')"
    "$nsys" stats -q -r cuda_gpu_trace -f csv -o /tmp/tr_${set}_$g /tmp/tr_${set}_$g.nsys-rep >/dev/null 2>&1
    gzip -c /tmp/tr_${set}_$g*cuda_gpu_trace*.csv >"$out/trace_${set}_$g.csv.gz" 2>/dev/null || echo "no trace csv for $set $g"
  done
done
abs=$(realpath -m "$out"); (cd /tmp && tar -czf "$abs/nsys_logs.tar.gz" nsys_*.log); ls -la "$out"; echo "call done at $((SECONDS - t0)) s"
