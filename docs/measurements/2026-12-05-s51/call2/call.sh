#!/usr/bin/env bash
# Device call 2 of the fifty-first session's plan, prepared (carry .fla .triton-pack): the whole
# FLA table (all four ops, six shapes, both policies, FLA timed in the same call) with
# REWY_EXPERIMENTS=$EXPS, the parts of calls 1 and 3's sets that won there (default: all of them,
# dcutfb:gdn, dcutbwd:gdn, kseg2p:kda and kseg2p:gdn2; EXPS= for the defaults alone). No tests:
# calls 1 and 3 ran them and both sanitizers under the sets. On a warm machine the build is
# incremental.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out/table"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
exps=${EXPS-dcutfb:gdn,dcutbwd:gdn,kseg2p:kda,kseg2p:gdn2}
echo "REWY_EXPERIMENTS='$exps'"
rewy_device_build "$out/build.log" 300 bench_delta delta_accuracy rewy
echo "build exit $? at $((SECONDS - t0)) s"
rewy_fla_table "$out/table" $((560 - (SECONDS - t0))) REWY_EXPERIMENTS="$exps"
echo "table exit $? at $((SECONDS - t0)) s"
(cd "$out" && tar -czf /tmp/call2.tar.gz . && find . -mindepth 1 -delete && mv /tmp/call2.tar.gz all.tar.gz)
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
