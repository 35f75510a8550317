#!/usr/bin/env bash
# Device call 1 of the fifty-third session (the fifty-second session's call 2, unchanged; carry
# .fla .triton-pack; 386 s on a fresh H200): both prepared sets decided in one device-decide call,
# GDN's decay cut on both passes (dcutfb,dcutbwd@gdn) and KDA's and GDN2's two-pass few-pair
# forward (kseg2p@kda,gdn2), each against the defaults at shapes 2, 3, 5, the benchmark's gates
# and weak decay, judged by the geomean of both directions; tests under each, no sanitizers; the
# FLA table of GDN and KDA with the winners. (The experiment names are those of commit c4c4454:
# since, the decay cut is the default and REWY_EXPERIMENTS=nodcut turns it off.)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
VARIANTS=gdn,kda,gdn2 SETS='dcutfb,dcutbwd@gdn kseg2p@kda,gdn2' NOSAN='dcutfb,dcutbwd kseg2p' OPS_GATES=bench,weak \
  PICK_DIRECTION=both OPS_SHAPES=2,3,5 OPS_BACKWARD=rewy LIMIT_S=560 SETS_UNTIL_S=330 OPS=gdn,kda \
  bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && tail -40 /tmp/dd/decide.log
grep -hE "^(kda|gdn2) .*two passes" /tmp/dd/tests_kseg2p.log 2>/dev/null | head -6
[ -f /tmp/dd/table/side_by_side.txt ] && grep -E "^==|^gdn|^kda" /tmp/dd/table/side_by_side.txt | head -60
ls -la "$out"
echo "call done at $((SECONDS - t0)) s"
