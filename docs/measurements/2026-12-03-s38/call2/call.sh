#!/usr/bin/env bash
# Device call 2 of the thirty-eighth session (carry .fla .triton-pack): the one-pack phase 4 as
# KDA's and GDN2's default (grad_chunk at K = V = 128, ReWY and baseline). Every GPU test and both
# sanitizers (device-decide DEFAULT_TESTS=1, TABLE=0: call 1's table timed these kernels), and
# beside them the part-1 same-input accuracy sweep against FLA for KDA and GDN2 (T in {1, 63, 64,
# 65, 1000, 4096} and three packed sequences, with and without h0; bench-vs-fla.sh's four groups
# of cases a process each).
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
groups=("1,1:h0" "63,63:h0,65,65:h0,1000,1000:h0" "64,64:h0,4096,4096:h0" "v63+1000+130,v63+1000+130:h0")
(
  for op in kda gdn2; do
    for g in "${!groups[@]}"; do
      OPENBLAS_NUM_THREADS=1 TRITON_CACHE_AUTOTUNING=0 timeout 360 python3 bench/accuracy_vs_fla.py --rewy build-gpu/rewy \
        --ops $op --cases "${groups[$g]}" --H 16 --seeds 1 --work /tmp/acc-$op-$g >"$out/acc_vs_fla_${op}_$g.log" 2>&1 &
    done
  done
  wait; touch /tmp/acc.done
) &
HOLD_TIMING_UNTIL=/tmp/acc.done DEFAULT_TESTS=1 TABLE=0 VARIANTS=kda,gdn2 OPS_SHAPES=0,3 LIMIT_S=560 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -30
for op in kda gdn2; do python3 bench/accuracy_vs_fla.py --summarize /tmp/dd/acc_vs_fla_${op}_*.log; done | tee "$out/side_by_side_accuracy.txt"
for f in /tmp/dd/acc_vs_fla_*.log; do grep -q 'same-input accuracy summary' "$f" || echo "unfinished: $(basename "$f"): $(tail -1 "$f")"; done
echo "call done at $((SECONDS - t0)) s"
