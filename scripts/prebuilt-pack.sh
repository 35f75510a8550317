#!/usr/bin/env bash
# Builds the CUDA binaries on this machine (nvcc, sm_90a, Release, shared engine and kernels) and
# packs them into .prebuilt/build-gpu.tar.gz (git-ignored) with a stamp of the sources they came
# from. A device call that carries .prebuilt skips its build (about 200 s of a fresh machine's
# time): rewy_device_build (scripts/common.sh) unpacks the pack into build-gpu where the stamp
# matches the sources it was sent with and every target it asks for is in it, and builds as before
# otherwise. The shared libraries keep the executables small: the kernels travel once.
#   scripts/prebuilt-pack.sh [targets...]   (default: gpu_test_delta bench_delta delta_accuracy rewy)
# Environment: PREBUILT_DIR (the build directory, default build-prebuilt), REWY_JOBS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
source scripts/common.sh
[ "$REWY_HAVE_NVCC" = 1 ] || { echo "prebuilt-pack: no nvcc here: nothing to pack" >&2; exit 2; }
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(gpu_test_delta bench_delta delta_accuracy rewy)
dir=${PREBUILT_DIR:-build-prebuilt}
rewy_configure "$dir" -DREWY_CUDA=ON -DREWY_SHARED_LIBS=ON >/dev/null
rewy_build "$dir" "${targets[@]}"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build-gpu/prebuilt-lib"
paths=(engine/librewy_engine.so kernels/librewy_kernels.so)
for t in "${targets[@]}"; do
  found=$(cd "$dir" && find . -path ./CMakeFiles -prune -o -type f -name "$t" -perm -u+x -print -quit)
  [ -n "$found" ] || { echo "prebuilt-pack: no executable $t in $dir" >&2; exit 1; }
  paths+=("${found#./}")
done
for p in "${paths[@]}"; do
  mkdir -p "$stage/build-gpu/$(dirname "$p")"
  cp "$dir/$p" "$stage/build-gpu/$p"
done
# The libraries a GPU machine may lack or name otherwise (Debian's Google Benchmark soname, the
# CUDA runtime this nvcc built against), beside the executables on LD_LIBRARY_PATH there.
for p in "${paths[@]}"; do ldd "$dir/$p"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -E "libbenchmark|libcudart" | while read -r lib; do cp -L "$lib" "$stage/build-gpu/prebuilt-lib/"; done
printf '%s\n' "${targets[@]}" >"$stage/build-gpu/prebuilt-targets"
rewy_source_stamp >"$stage/build-gpu/prebuilt-stamp"
mkdir -p .prebuilt
rm -f .prebuilt/build-gpu.tar
tar -czf .prebuilt/build-gpu.tar.gz -C "$stage" build-gpu
echo "prebuilt-pack: .prebuilt/build-gpu.tar.gz ($(du -h .prebuilt/build-gpu.tar.gz | cut -f1)): ${targets[*]}," \
  "stamp $(cat "$stage/build-gpu/prebuilt-stamp")"
