#!/usr/bin/env bash
# Device call 2 of the thirty-seventh session (carry .fla .triton-pack; the pack lacks FLA's KDA
# kernels at shapes 4 and 5, so FLA_COMPILE=1 warms all four ops from the unpacked cache beside the
# build and tests, and the full pack comes back). The new defaults (KDA's and GDN2's ∂A from E, the
# bf16 twin with them): every GPU test and both sanitizers; experiment `eformw` (DeltaNet's and
# GDN's ReWY grad_chunk in the E-form, ∂A by warp products) against the defaults; the FLA table
# with the winners; its ours.csv against the thirty-sixth session's call 4.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
python3 bench/triton_cache.py unpack .triton-pack .triton-cache >/dev/null 2>&1 || echo "unpack failed"
FLA_COMPILE=1 DEFAULT_TESTS=1 VARIANTS=deltanet,gdn,kda,gdn2 SETS='eformw@deltanet,gdn' LIMIT_S=570 \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^ *(memcheck|racecheck) exit" /tmp/dd/decide.log | tail -50
[ -f /tmp/dd/table/ours.csv ] && python3 bench/compare_ours.py docs/measurements/2026-12-03-s36/call4/table/ours.csv /tmp/dd/table/ours.csv
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
