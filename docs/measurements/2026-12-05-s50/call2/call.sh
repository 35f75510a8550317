#!/usr/bin/env bash
# Device call 2 of the fiftieth session (carry .fla .triton-pack): the FLA table of the defaults
# (the first with the two-pass segment scan on for DeltaNet and GDN at up to 16 pairs), FLA timed
# in the same call; no tests (call 1 ran them on this commit). (Its first try ran device-decide
# without SETS, which it refuses: 0 s.)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out/table"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
rewy_device_build "$out/build.log" 300 bench_delta delta_accuracy rewy
echo "build exit $? at $((SECONDS - t0)) s"
rewy_fla_table "$out/table" $((560 - (SECONDS - t0)))
echo "table exit $? at $((SECONDS - t0)) s"
(cd "$out" && tar -czf /tmp/call2.tar.gz . && find . -mindepth 1 -delete && mv /tmp/call2.tar.gz all.tar.gz)
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
