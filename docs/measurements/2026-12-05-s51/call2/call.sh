#!/usr/bin/env bash
# Device call 2 of the fifty-first session's plan, prepared (carry .fla .triton-pack): the whole
# FLA table (all four ops, six shapes, both policies, FLA timed in the same call) with
# REWY_EXPERIMENTS=$EXPS, the parts of call 1's set that won there (default: both, dcutfb:gdn and
# dcutbwd:gdn; EXPS= for the defaults alone). No tests: call 1 ran GDN's and both sanitizers
# under the set. On a warm machine from call 1 the build is incremental.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out/table"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
exps=${EXPS-dcutfb:gdn,dcutbwd:gdn}
echo "REWY_EXPERIMENTS='$exps'"
rewy_device_build "$out/build.log" 300 bench_delta delta_accuracy rewy
echo "build exit $? at $((SECONDS - t0)) s"
rewy_fla_table "$out/table" $((560 - (SECONDS - t0))) REWY_EXPERIMENTS="$exps"
echo "table exit $? at $((SECONDS - t0)) s"
(cd "$out" && tar -czf /tmp/call2.tar.gz . && find . -mindepth 1 -delete && mv /tmp/call2.tar.gz all.tar.gz)
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
