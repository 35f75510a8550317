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
# Recompute, bench gates, OPS_BACKWARD or both backwards, OPS_SHAPES or shapes 0, 3, 5, OPS_ARGS
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
    --policies "${OPS_POLICIES:-recompute}" --gates bench --samples 10 --backward "${OPS_BACKWARD:-rewy,baseline}" \
    "${extra[@]}" --csv "$csv" >/dev/null 2>&1
}
