#!/usr/bin/env bash
# Device call 2 of the thirty-fourth session (carry .fla .triton-pack): the fenced beside forward
# as the Recompute forward's default. Which tools give their child a variable to detect them by;
# every GPU test and both sanitizers on the new defaults; two rules for where it runs against the
# default rule: fwdwide (33-64 pairs too, the pass in whole-V slices) and fwdcap64 (KDA's and
# GDN2's pass capped at 64 CTAs, not 32), by the Recompute forward at shapes 1, 2, 3, 5; the FLA
# table with the winners.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
{  # (beside the build)
  echo "own environment:"; printenv | grep -E "INJECTION|PRELOAD" || echo "  (none)"
  for tool in "compute-sanitizer --tool memcheck" "ncu" "nsys profile -o /tmp/probe --force-overwrite true"; do
    set -- $tool
    command -v "$1" >/dev/null || { echo "$1: not installed"; continue; }
    echo "$tool:"; timeout 30 $tool printenv 2>/dev/null | grep -E "INJECTION|PRELOAD" || echo "  (none)"
  done
} >"$out/tool_env.txt" 2>&1 &
probe=$!
rewy_device_build "$out/build0.log" 300 gpu_test_delta bench_delta delta_accuracy rewy || { tail -5 "$out/build0.log"; exit 1; }
echo "built at $((SECONDS - t0)) s"
wait $probe; cat "$out/tool_env.txt"
DEFAULT_TESTS=1 SETS='fwdwide fwdcap64@kda,gdn2' NOSAN='fwdwide fwdcap64' PICK_DIRECTION=fwd VARIANTS=deltanet,gdn,kda,gdn2 \
  OPS_SHAPES=1,2,3,5 OPS_POLICIES=recompute OPS_BACKWARD=rewy LIMIT_S=$((575 - (SECONDS - t0))) \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -45
