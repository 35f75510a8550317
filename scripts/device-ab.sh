#!/usr/bin/env bash
# One device call for a kernel change: this tree's GPU tests and sanitizers, every kernel timed
# against a base tree in the same call, whole ops of both trees (OPS_AB=1), then (TABLE=1) the
# FLA table. Leaves at most 8 files in $OUT (the device returns no more): gpucheck.log,
# ab_compare.txt, phases.txt, ops_base.csv, ops_new.csv, and with the table ours.csv,
# fla_anchor.csv, side_by_side.txt.
#
#   here:    rm -rf build-ab && mkdir -p build-ab/src && git archive BASE | tar -x -C build-ab/src
#   device:  bash scripts/device-ab.sh     (carry ["build-ab", ".fla", ".triton-pack"])
#
# Environment: AB_SRC (default build-ab/src; none: no A/B), PHASE_SHAPES (default 0,5), OPS_AB
# (default 1: both trees' bench_delta --csv at OPS_SHAPES, default 0,3,5, OPS_POLICIES, default
# recompute, both backwards, and bench/compare_ours.py base / new: whole ops to about 1%, 40-60 s
# a policy), TABLE
# (default 1), OPS (the table's ops, default all four), LIMIT_S (the call's limit, default 600:
# the table gets what is left of it less 25 s, and is skipped below 120 s).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
source scripts/common.sh
out=${OUT:-out}
mkdir -p "$out"
t0=$SECONDS
ab=${AB_SRC-build-ab/src}
[ -n "$ab" ] && [ ! -d "$ab" ] && { echo "device-ab: no base tree at $ab (AB_SRC)" >&2; exit 2; }

SANITIZERS=1 BENCH=0 PHASES=1 PHASE_SHAPES=${PHASE_SHAPES:-0,5} AB_SRC=$ab \
  bash scripts/gpu-check.sh build-gpu >"$out/gpucheck.log" 2>&1
rc=$?
# The per-kernel comparisons (old = the base tree), then the check's summary table.
sed -n '/^shape [0-9]*:/,/^$/p' "$out/gpucheck.log" | grep -v '^\[' >"$out/ab_compare.txt"
cat "$out/ab_compare.txt"
tail -12 "$out/gpucheck.log"
echo "device-ab: gpu-check exit $rc after $((SECONDS - t0)) s"
rm -f "$out"/phases_base*.txt "$out"/phases_s*.txt  # in ab_compare.txt; phases.txt (shape 0) stays

# Whole ops of both trees, one after the other (the base second: the build timed first reads 1-4%
# slow on unchanged kernels, so a change that reads faster here is not that bias).
if [ $rc -eq 0 ] && [ -n "$ab" ] && [ "${OPS_AB:-1}" = 1 ]; then
  if rewy_ops_csv build-gpu/bench/bench_delta "$out/ops_new.csv" &&
    rewy_ops_csv "$(realpath -m "$ab/../build")/bench/bench_delta" "$out/ops_base.csv"; then
    echo "device-ab: whole ops, base / new:"
    python3 bench/compare_ours.py "$out/ops_base.csv" "$out/ops_new.csv"
    python3 bench/compare_ours.py --algo baseline "$out/ops_base.csv" "$out/ops_new.csv" | tail -n +2 | grep bwd
  else
    echo "device-ab: the whole-op runs failed (see ops_*.csv)"
  fi
  echo "device-ab: whole ops done after $((SECONDS - t0)) s"
fi

left=$((${LIMIT_S:-600} - 25 - (SECONDS - t0)))
if [ $rc -eq 0 ] && [ "${TABLE:-1}" = 1 ]; then
  if [ $left -lt 120 ]; then
    echo "device-ab: $left s left: no FLA table"
  else
    rewy_fla_table "$out" "$left" FLA_TIMEOUT=$((left < 300 ? left : 300))
    echo "device-ab: FLA table exit $? after $((SECONDS - t0)) s"
  fi
fi
exit $rc
