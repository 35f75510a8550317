#!/usr/bin/env bash
# SASS size of the delta-rule kernels in a CUDA build: instructions (16 bytes each) per kernel at
# K = V = 128. The chunk-parallel kernels are straight-line code run once per CTA at one or two
# CTAs an SM; past the SM's instruction cache they stall on fetch (GDN2's grad_chunk at 149 KB
# spent half its cycles there, docs/perf-delta.md), so watch these numbers as features land.
#
#   scripts/sass-size.sh [BUILD_DIR]      BUILD_DIR defaults to build-gpu; CUOBJDUMP overrides the tool
# Without a GPU toolkit's cuobjdump: `pip download nvidia-cuda-cuobjdump`, unzip, point CUOBJDUMP at it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build-gpu}
tool=${CUOBJDUMP:-$(command -v cuobjdump || true)}
[ -n "$tool" ] && [ -x "$tool" ] || { echo "sass-size: cuobjdump not found (set CUOBJDUMP)" >&2; exit 1; }
objs=$(find "$build/kernels" -name 'variant_*.cu.o' 2>/dev/null | sort)
[ -n "$objs" ] || { echo "sass-size: no variant_*.cu.o under $build/kernels (build with CUDA first)" >&2; exit 1; }
printf '%-10s %-24s %8s %8s\n' variant kernel instr KB
for o in $objs; do
  v=$(basename "$o" .cu.o); v=${v#variant_}
  "$tool" -sass "$o" | awk -v v="$v" '
    /Function :/ { f = $3 }
    /^ +\/\*[0-9a-f]+\*\// { n[f]++ }
    END {
      for (k in n) {
        if (k !~ /Li128ELi128E/) continue
        # template tail after <VAR, 128, 128: grad_chunk <REWY>, wy_prep <MODE>,
        # state_fwd <BV, OUTPUT, STORE>, state_bwd <BV>
        t = k; sub(/^.*ILi[0-9]+ELi128ELi128E/, "", t); sub(/EEvNS1_11DeltaParamsE$/, "", t)
        gsub(/L[ib]/, "", t); gsub(/E/, " ", t); split(t, a, " ")
        if (k ~ /grad_chunk/) name = "grad_chunk " (a[1] == "1" ? "rewy" : "baseline")
        else if (k ~ /wy_prep/) name = "wy_prep " (a[1] == "0" ? "forward" : "replay")
        else if (k ~ /state_fwd/) name = "state_fwd " a[1] " " (a[2] == "1" ? (a[3] == "1" ? "out_store" : "out") : "replay")
        else if (k ~ /state_bwd/) name = "state_bwd " a[1]
        else name = k
        printf "%-10s %-24s %8d %8.1f\n", v, name, n[k], n[k] * 16 / 1024
      }
    }' | sort -k2,3
done
