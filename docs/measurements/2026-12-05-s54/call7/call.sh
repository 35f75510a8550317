#!/usr/bin/env bash
# Prepared for the next session (not run in the fifty-fourth: no device time left). Carry .prebuilt
# .fla .triton-pack. The experiment planpdl (GDN's wy_prep as a programmatic dependent of the decay
# cut's plan that never waits for it, where the two-pass fallback's form does not read the plan;
# call 6's probe: the launches after such a dependent wait for both grids): GDN's GPU tests, memcheck
# and racecheck under it, whole ops at shapes 2, 3, 5 at the benchmark's and weak gates against the
# defaults (the plan is 16 us of the forward's chain at (1, 16384, 16); it changes no backward),
# judged by the forward, then GDN's FLA table with the winner. Then the backward's cut at
# (2, 8192, 16), which the 256-chunk bound leaves out (0.996x there with the 46 µs plan, fifty-third
# session; the plan is 22 µs now): --backward-cut 4 (segment_count's count there) against the
# default, both gates. About 280 s with the pack.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 2
source scripts/common.sh
out=${OUT:-out}; mkdir -p "$out"; t0=$SECONDS
export NCCL_NVLS_ENABLE=0
# (here too, for this shell's LD_LIBRARY_PATH: the pack's executables need it)
rewy_device_build "$out/build0.log" 280 gpu_test_delta bench_delta delta_accuracy rewy; echo "build exit $?"
SETS='planpdl@gdn' VARIANTS=gdn OPS=gdn OPS_SHAPES=2,3,5 OPS_GATES=bench,weak OPS_BACKWARD=rewy PICK_DIRECTION=fwd \
  LIMIT_S=${LIMIT_S:-400} bash scripts/device-decide.sh >"$out/decide.log" 2>&1
echo "decide exit $? at $((SECONDS - t0)) s"
mkdir -p /tmp/dd && tar -xzf "$out/all.tar.gz" -C /tmp/dd && grep -vE "^(deltanet|gdn|gdn2|kda) .*(T=|BV=)|cycles:|us/call" /tmp/dd/decide.log | tail -40
b=build-gpu/bench/bench_delta
for cut in 0 4; do
  timeout 60 $b --ops gdn --shapes 2 --policies recompute --gates bench,weak --samples 30 --backward rewy \
    --backward-cut $cut --csv "/tmp/bcut$cut.csv" >/dev/null 2>&1
  echo "backward-cut $cut exit $?"
done
python3 - <<'PY'
import csv
def load(f):
    return {(r['gates'], r['dir']): float(r['median_ms']) for r in csv.DictReader(open(f)) if r['algo'] in ('rewy', '-')}
a, b = load('/tmp/bcut0.csv'), load('/tmp/bcut4.csv')
for k in sorted(a):
    if k in b: print("(2, 8192, 16) default -> --backward-cut 4", *k, f"{a[k]:.4f} -> {b[k]:.4f}  {a[k] / b[k]:.3f}x")
PY
echo "call done at $((SECONDS - t0)) s"
