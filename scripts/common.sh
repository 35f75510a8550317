# Sourced by the other scripts: the repository root, the CUDA toolkit on PATH, configure + build.

REWY_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REWY_JOBS=$(nproc)

# nvcc may be installed without being on PATH (the CUDA toolkit's default /usr/local/cuda/bin).
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
if command -v nvcc >/dev/null 2>&1; then REWY_HAVE_NVCC=1; else REWY_HAVE_NVCC=0; fi

# rewy_configure DIR [cmake args...]: Release + Ninja; CUDA on exactly when nvcc exists
# (later args win, so a caller can still pass -DREWY_CUDA=OFF).
rewy_configure() {
  local dir=$1
  shift
  local cuda=OFF
  if [ "$REWY_HAVE_NVCC" = 1 ]; then cuda=ON; else echo "rewy: no nvcc found: CPU-only build"; fi
  cmake -S "$REWY_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DREWY_CUDA=$cuda "$@"
}

# rewy_build DIR [targets...]
rewy_build() {
  local dir=$1
  shift
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$dir" -j "$REWY_JOBS" "${targets[@]}"
}

# rewy_step NAME COMMAND...: runs and times one step; the timings are printed by rewy_summary.
REWY_STEPS=()
rewy_step() {
  local name=$1
  shift
  local t0=$SECONDS
  echo "==> $name"
  "$@"
  REWY_STEPS+=("$(printf '%-28s %6ds' "$name" $((SECONDS - t0)))")
}
rewy_summary() {
  echo "==> done"
  local s
  for s in "${REWY_STEPS[@]}"; do echo "    $s"; done
}

# rewy_ops_csv BENCH_DELTA CSV [VAR=VALUE...]: whole ops (OPS_VARIANTS or all four, OPS_POLICIES or
# Recompute, OPS_GATES or bench gates (e.g. bench,weak: GDN at weak decay too), OPS_BACKWARD or both backwards, OPS_SHAPES or shapes 0, 3, 5, OPS_ARGS
# appended to bench_delta's options, e.g. "--prep-warps 16") timed into CSV, with the given
# environment; for bench/compare_ours.py between two builds or two settings of one (the device-*.sh
# scripts). OPS_POLICIES=recompute,save adds the Save policy (about twice the time: mind the 150 s
# limit with more shapes).
rewy_ops_csv() {
  local bin=$1 csv=$2
  shift 2
  local extra=()
  read -r -a extra <<<"${OPS_ARGS:-}"
  env "$@" timeout 150 "$bin" --ops "${OPS_VARIANTS:-deltanet,gdn,kda,gdn2}" --shapes "${OPS_SHAPES:-0,3,5}" \
    --policies "${OPS_POLICIES:-recompute}" --gates "${OPS_GATES:-bench}" --samples 10 --backward "${OPS_BACKWARD:-rewy,baseline}" \
    "${extra[@]}" --csv "$csv" >/dev/null 2>&1
}

# rewy_fla_table OUT LEFT [VAR=VALUE...]: the FLA table (scripts/bench-vs-fla.sh on build-gpu, no
# accuracy runs, 10 samples; FLA's phases limited to LEFT - 20 s unless a FLA_TIMEOUT word says
# otherwise) into OUT within LEFT seconds, with the given environment; prints the table's summary
# lines and keeps ours.csv, fla_anchor.csv and side_by_side.txt (the device returns few files).
# Returns bench-vs-fla.sh's exit status.
rewy_fla_table() {
  local out=$1 left=$2
  shift 2
  env BUILD=build-gpu ACCURACY=0 SAMPLES=10 FLA_TIMEOUT=$((left - 20)) OUT="$out" "$@" \
    timeout "$left" bash "$REWY_ROOT/scripts/bench-vs-fla.sh" >"$out/bench.log" 2>&1
  local rc=$?
  grep -E '^==|geomean|min ' "$out/side_by_side.txt" 2>/dev/null || tail -20 "$out/bench.log"
  rm -f "$out/bench.log" "$out/fla_session.log" "$out/acc.txt"
  return $rc
}

# rewy_source_stamp: a hash of the sources a build reads (C++, CUDA and CMake files under the
# project's code folders), the same wherever the tree is copied (no git needed).
rewy_source_stamp() {
  (
    cd "$REWY_ROOT" || exit 1
    paths=()
    for p in CMakeLists.txt engine kernels models data train cli tests bench; do [ -e "$p" ] && paths+=("$p"); done
    find "${paths[@]}" -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name 'CMakeLists.txt' \
      -o -name '*.cmake' \) | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16
  )
}

# rewy_use_prebuilt LOG TARGETS...: unpacks .prebuilt/build-gpu.tar.gz (scripts/prebuilt-pack.sh)
# into build-gpu where its stamp matches these sources, it holds every target and each finds its
# libraries; puts its libraries on LD_LIBRARY_PATH. 0 when build-gpu is then ready, 1 otherwise
# (the reason in LOG; build-gpu untouched unless it was unpacked).
rewy_use_prebuilt() {
  local log=$1 pack="$REWY_ROOT/.prebuilt/build-gpu.tar.gz" stamp sources packed t
  shift
  [ -f "$pack" ] || { echo "prebuilt: no $pack" >>"$log"; return 1; }
  stamp=$(tar -xOf "$pack" build-gpu/prebuilt-stamp 2>/dev/null)
  sources=$(rewy_source_stamp)
  [ "$stamp" = "$sources" ] || { echo "prebuilt: stamp $stamp is not these sources' $sources" >>"$log"; return 1; }
  packed=$(tar -xOf "$pack" build-gpu/prebuilt-targets)
  for t in "$@"; do
    grep -qx "$t" <<<"$packed" || { echo "prebuilt: no $t in the pack" >>"$log"; return 1; }
  done
  rm -rf "$REWY_ROOT/build-gpu" && tar -xf "$pack" -C "$REWY_ROOT" || { echo "prebuilt: unpack failed" >>"$log"; return 1; }
  # (cuBLAS from this machine's toolkit, wherever it sits: the pack's rpaths name the packer's.)
  local cuda_libs="" nvcc_dir d
  nvcc_dir=$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")
  for d in "$nvcc_dir/../lib64" "$nvcc_dir/../lib" "$nvcc_dir/../targets/x86_64-linux/lib"; do
    [ -d "$d" ] && cuda_libs="$cuda_libs:$(cd "$d" && pwd)"
  done
  export LD_LIBRARY_PATH="$REWY_ROOT/build-gpu/prebuilt-lib$cuda_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local missing
  missing=$(cd "$REWY_ROOT/build-gpu" && find . -type f -perm -u+x ! -name '*.so*' -exec ldd {} \; | grep "not found" | sort -u)
  if [ -n "$missing" ]; then
    echo "prebuilt: libraries not found: $missing" >>"$log"
    rm -rf "$REWY_ROOT/build-gpu"
    return 1
  fi
  echo "prebuilt: build-gpu from the pack, stamp $stamp: $(tr '\n' ' ' <<<"$packed")" >>"$log"
}

# rewy_device_build LOG LIMIT TARGETS...: build-gpu from the prebuilt pack where it serves
# (rewy_use_prebuilt), else configures build-gpu (CUDA) and builds TARGETS within LIMIT seconds,
# the output into LOG (the device-*.sh calls' builds). Returns the build's status.
rewy_device_build() {
  local log=$1 limit=$2
  shift 2
  : >"$log"
  rewy_use_prebuilt "$log" "$@" && return 0
  { rewy_configure build-gpu -DREWY_CUDA=ON >/dev/null &&
    timeout "$limit" bash -c 'source "$0"; rewy_build build-gpu "$@"' "$REWY_ROOT/scripts/common.sh" "$@"; } >>"$log" 2>&1
}

# rewy_gpu_test_filter VARIANTS [cases]: the gtest filter of those variants' GpuDelta tests
# (comma-separated deltanet, gdn, kda, gdn2; DeltaNet's and GDN's include the unfused forward that
# keeps 𝒯 Diag(β) for the replay, a path their explicit slices never meet, and the segment scan's
# forward, which runs only where asked; DeltaNet's ∂K̄ state term from state_bwd (Config::dk_state_term),
# the same; GDN's the backward's decay cut, the same; KDA's and GDN2's their
# fused forward, which check_variant meets only where wy_prep does not run beside, and their two-pass
# form, which runs only where asked); with "cases", also the
# channel-gate, misaligned-view and empty-sequence cases that every variant's kernels meet.
rewy_gpu_test_filter() {
  local -A test_of=([deltanet]=DeltaNet [gdn]=GDN [kda]=KDA [gdn2]=GDN2)
  local v tests=()
  for v in ${1//,/ }; do tests+=("GpuDelta.${test_of[$v]}"); done
  [[ ",$1," == *,deltanet,* || ",$1," == *,gdn,* ]] &&
    tests+=(GpuDelta.UnfusedForwardKeepsTbetaForReplay GpuDelta.SegmentScanForward)
  [[ ",$1," == *,deltanet,* ]] && tests+=(GpuDelta.DkStateBackward)
  [[ ",$1," == *,gdn,* ]] && tests+=(GpuDelta.DecayCutBackward)
  [[ ",$1," == *,kda,* || ",$1," == *,gdn2,* ]] && tests+=(GpuDelta.FusedChannelForward GpuDelta.ChannelGateTwoPassForward)
  [ "${2:-}" = cases ] &&
    tests+=(GpuDelta.ChannelGatesRealisticAndOutOfRange GpuDelta.MisalignedInputViews GpuDelta.EmptySequenceTakesTheSequentialPasses)
  local IFS=:
  echo "${tests[*]}"
}
