#!/usr/bin/env bash
# One device call that decides experiments and tables the winners (400-420 s on a fresh machine
# with three or four sets; carry .fla and .triton-pack): build gpu_test_delta, bench_delta,
# delta_accuracy and rewy; whole ops of VARIANTS with the defaults (Recompute, both backwards,
# OPS_SHAPES); then per experiment set: the GPU tests of its variants and the channel-gate cases,
# memcheck and racecheck on the small case (sets in NOSAN skip them), whole ops against the
# defaults (bench/compare_ours.py: above 1 the set is faster). Each variant takes the set with its best
# Recompute ReWY backward geomean above 1.005 (tests and sanitizers clean; bench/pick_sets.py),
# scoped as set:variant, and the FLA table (scripts/bench-vs-fla.sh) runs with that
# REWY_EXPERIMENTS; phases at shape 0 if time is left. Leaves in $OUT one all.tar.gz (the device
# returns at most 8 files).
#
#   device:  [FLA_COMPILE=1] [DEFAULT_TESTS=1] SETS='name1 name2@kda,gdn2' [NOSAN=name2] LIMIT_S=570 bash scripts/device-decide.sh
#   (2026-12-02, 400-420 s with three sets: docs/measurements/2026-12-02-s27/call*-decide/summary.txt)
#
# Environment: PICK_DIRECTION (bwd, the default: sets are judged by the Recompute backward; fwd;
# both: the geomean of the two), SETS (REWY_EXPERIMENTS names, one per set, or none with DEFAULT_TESTS=1: the
# defaults' tests, table and phases alone; SETS=none: the defaults' ops and table, no tests; name@v1,v2 lets the set win
# only for those variants, and runs its tests, sanitizers and ops on them alone: it changes no
# other's kernels, where noise alone could pick it),
# OPS_BACKWARD (default rewy,baseline; rewy alone for sets that change the forward only),
# OPS_POLICIES (default recompute; recompute,save times the Save forms too; sets are picked by Recompute),
# DEFAULT_TESTS=1 (the defaults changed: every GPU test and both sanitizers on them first, the call
# ending if they fail), VARIANTS (default gdn,kda,gdn2), OPS_SHAPES (default 0,3,4,5), NOSAN (sets without the
# sanitizers), LIMIT_S (the call's limit: the table starts only with at least 140 s left; default
# 555), BUILD_S (default 280), FLA_COMPILE=1 (a session's first call, without .triton-pack: FLA's
# kernels compile in four background processes beside the build and tests, the timing waits for
# them, and the compiled kernels come back as OUT/triton-cache.tar.xz.NN for .triton-pack),
# HOLD_TIMING_UNTIL (a file that a job of the caller's beside the build and tests touches when it ends),
# TABLE=0 (no FLA table), OPS_GATES (default bench; bench,weak times GDN at weak decay too and
# compares it per set), SETS_UNTIL_S (default 430: sets that would start later are skipped, so
# that the call ends, and its tar is made, inside the device's 600 s).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
[ -n "${SETS:-}" ] || [ "${DEFAULT_TESTS:-0}" = 1 ] ||
  { echo "device-decide: set SETS (experiment names, e.g. 'a b@kda,gdn2'), DEFAULT_TESTS=1 to check and table the defaults alone, or SETS=none to table them untested"; exit 2; }
[ "${SETS:-}" = none ] && SETS=''
variants=${VARIANTS:-gdn,kda,gdn2}
export NCCL_NVLS_ENABLE=0
compiled=""
if [ "${FLA_COMPILE:-0}" = 1 ]; then
  export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/bench:$PWD/.fla" TRITON_CACHE_DIR="$PWD/.triton-cache"
  compiled=$(realpath -m "$out")/.fla-compiled; rm -f "$compiled"
  (
    pids=()
    for op in delta gdn kda gdn2; do
      TRITON_CACHE_AUTOTUNING=0 timeout "${WARM_S:-400}" python3 bench/fla_warm.py --ops $op >"$out/fla_warm_$op.log" 2>&1 &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || echo "device-decide: FLA's compile of one op ended with $?"; done
    echo "device-decide: FLA compiled at $((SECONDS - t0)) s"; touch "$compiled"
  ) &
fi
# On every exit: one all.tar.gz, and FLA's compiled kernels beside it (the pack's parts are files of their own).
finish() {
  # The sanitizers' findings, condensed (each distinct line once, in order, with its count;
  # offsets dropped): the whole logs are too many files for the device to return.
  if compgen -G "$out/san_*.log" >/dev/null; then
    for f in "$out"/san_*.log; do
      echo "== $(basename "$f"): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$f" | tail -1)"
      grep -E "Error|and (Read|Write) access|Invalid|Address" "$f" |
        sed -E 's/\+0x[0-9a-f]+//g; s/ \[[0-9]+ hazards\]//; s/rewy::delta::cuda_impl:://g' |
        awk '{ if (!n[$0]++) order[++k] = $0 } END { for (i = 1; i <= k; i++) print n[order[i]] "x " order[i] }' | head -60
    done >"$out/sanitizers.txt"
  fi
  # A log with findings is kept whole (gzipped, inside the tar): the condensing drops its offsets.
  for f in "$out"/san_*.log; do
    [ -e "$f" ] && ! grep -qE "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards" "$f" && gzip -9 "$f"
  done
  rm -f "$out"/san_*.log "$out/.fla-compiled"
  (cd "$out" && tar -czf /tmp/decide.tar.gz . && find . -mindepth 1 -delete && mv /tmp/decide.tar.gz all.tar.gz)
  if [ -n "$compiled" ] && [ -d "$TRITON_CACHE_DIR" ]; then
    python3 bench/triton_cache.py pack "$TRITON_CACHE_DIR" "$out" && echo "device-decide: packed at $((SECONDS - t0)) s"
    ls "$out"
  fi
}
trap finish EXIT
reserve=$([ -n "$compiled" ] && echo 45 || echo 0)  # seconds kept for the pack
rewy_device_build "$out/build.log" "${BUILD_S:-280}" gpu_test_delta bench_delta delta_accuracy rewy
rc=$?; echo "device-decide: build exit $rc at $((SECONDS - t0)) s"
[ $rc -eq 0 ] || { tail -5 "$out/build.log"; exit $rc; }
# gpu_tests NAME SECONDS FILTER [VAR=VALUE]: gpu_test_delta's FILTER ('*': every test) into
# tests_NAME.log; prints the summary, and the failing checks when it fails (its status); ends the
# script when the tests skipped (no device).
gpu_tests() {
  local name=$1 log="$out/tests_$1.log" rc
  env ${4:+"$4"} timeout "$2" build-gpu/tests/gpu_test_delta --gtest_filter="$3" >"$log" 2>&1
  rc=$?; echo "== $name: tests exit $rc at $((SECONDS - t0)) s: $(grep -E '^\[  PASSED|FAILED  \]' "$log" | tr '\n' ' ')"
  [ $rc -eq 0 ] || { grep -E "Failure|Expected|Which|error" "$log" | head -20; return $rc; }
  ! grep -q "^\[  SKIPPED \]" "$log" || { echo "device-decide: the GPU tests skipped (no device)"; exit 3; }
}
# sanitize NAME VARIANTS [VAR=VALUE]: memcheck and racecheck on the small case; 0 when both are clean.
# (The sanitizer runs grids one at a time; the library knows it by the variables it gives its
# child and runs no wy_prep beside the forward's pass: grids_side_by_side in delta_cuda.cu.)
sanitize() {
  local name=$1 filter tool st bad=0
  filter=$(rewy_gpu_test_filter "$2")
  for tool in memcheck racecheck; do
    env ${3:+"$3"} REWY_GPU_TEST_SMALL=1 timeout "${SAN_TIMEOUT_S:-200}" compute-sanitizer --tool $tool --error-exitcode 1 \
      build-gpu/tests/gpu_test_delta --gtest_filter="$filter" >"$out/san_${name}_$tool.log" 2>&1
    st=$?; [ $st -eq 0 ] || bad=1
    # (A timeout is a failure too: the tests it did not reach went unchecked. Say so by name.)
    [ $st -eq 124 ] && echo "   $tool timed out after ${SAN_TIMEOUT_S:-200} s in $(grep -E '^\[ RUN' "$out/san_${name}_$tool.log" | tail -1 | cut -c14-)"
    echo "   $tool exit $st: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_${name}_$tool.log" | tail -1)"
  done
  [ $bad -eq 0 ] || grep -hE "Error|Race" "$out"/san_"${name}"_*.log | head -10
  return $bad
}
if [ "${DEFAULT_TESTS:-0}" = 1 ]; then  # the defaults themselves changed: every GPU test, both sanitizers
  gpu_tests default 120 '*' || exit 1
  sanitize default deltanet,gdn,kda,gdn2 || exit 1
fi
b=build-gpu/bench/bench_delta
[ -n "$compiled" ] && while [ ! -e "$compiled" ]; do sleep 2; done  # time nothing beside FLA's compile
# HOLD_TIMING_UNTIL=FILE: a job of the caller's beside the build and tests (e.g. accuracy draws)
# touches FILE when it ends; nothing is timed beside it.
[ -n "${HOLD_TIMING_UNTIL:-}" ] && while [ ! -e "$HOLD_TIMING_UNTIL" ]; do sleep 2; done
export OPS_VARIANTS=$variants OPS_SHAPES=${OPS_SHAPES:-0,3,4,5} OPS_POLICIES=${OPS_POLICIES:-recompute} OPS_BACKWARD=${OPS_BACKWARD:-rewy,baseline}
rewy_ops_csv $b "$out/ops_default.csv" || { echo "device-decide: the default ops failed"; exit 1; }
candidates=()  # NAME=CSV[@variants] of the sets that passed, for bench/pick_sets.py
for item in ${SETS:-}; do
  e=${item%%@*}
  # A set that starts past SETS_UNTIL_S (default 430 s) could run the call past the device's 600 s,
  # where the call is killed before this script's tar: skipped, so that what ran comes back.
  if [ $((SECONDS - t0)) -gt "${SETS_UNTIL_S:-430}" ]; then
    echo "== $e: skipped at $((SECONDS - t0)) s (past SETS_UNTIL_S=${SETS_UNTIL_S:-430})"
    continue
  fi
  only=""
  sv=$variants  # the variants whose kernels the set changes: its tests, sanitizers and ops
  [[ $item == *@* ]] && only=@${item#*@} && sv=${item#*@}
  gpu_tests "$e" 90 "$(rewy_gpu_test_filter "$sv" cases)" REWY_EXPERIMENTS="$e" || continue
  if [[ " ${NOSAN:-} " != *" $e "* ]]; then sanitize "$e" "$sv" REWY_EXPERIMENTS="$e" || continue; fi
  OPS_VARIANTS=$sv rewy_ops_csv $b "$out/ops_$e.csv" REWY_EXPERIMENTS=$e || continue
  python3 bench/compare_ours.py "$out/ops_default.csv" "$out/ops_$e.csv"
  if [[ ",${OPS_GATES:-bench}," == *,weak,* ]]; then
    echo "   weak gates:"
    python3 bench/compare_ours.py --gates weak "$out/ops_default.csv" "$out/ops_$e.csv" | tail -n +2
  fi
  echo "   baseline backward:"
  python3 bench/compare_ours.py --algo baseline "$out/ops_default.csv" "$out/ops_$e.csv" | grep bwd
  candidates+=("$e=$out/ops_$e.csv$only")
done
python3 bench/pick_sets.py "$out/ops_default.csv" "${candidates[@]}" --variants "$variants" \
  --direction "${PICK_DIRECTION:-bwd}" >"$out/pick.txt" ||
  { cat "$out/pick.txt"; exit 1; }
cat "$out/pick.txt"
exps=$(tail -n 1 "$out/pick.txt")
echo "device-decide: chosen REWY_EXPERIMENTS='$exps' at $((SECONDS - t0)) s"
left=$((${LIMIT_S:-555} - reserve - (SECONDS - t0)))
if [ "${TABLE:-1}" = 0 ]; then
  echo "device-decide: no table (TABLE=0)"
elif [ $left -ge 140 ]; then
  mkdir -p "$out/table"
  rewy_fla_table "$out/table" "$left" REWY_EXPERIMENTS="$exps" ${compiled:+WARM=0 TRITON_PACK=/nonexistent}
  echo "device-decide: table exit $? at $((SECONDS - t0)) s"
else
  echo "device-decide: no table ($left s left)"
fi
left=$((${LIMIT_S:-555} - reserve - (SECONDS - t0)))
if [ "${TABLE:-1}" != 0 ] && [ $left -ge 25 ]; then
  REWY_EXPERIMENTS="$exps" REWY_KERNEL_TIMING=2 timeout $((left - 5)) $b --ops "$variants" --shapes 0 --policies recompute \
    --gates bench --backward rewy --samples 3 >"$out/phases_chosen.txt" 2>&1
  grep -hE "grad_chunk.*(us/call|cycles)" "$out/phases_chosen.txt" | cut -c1-250
fi
echo "device-decide: done at $((SECONDS - t0)) s"
