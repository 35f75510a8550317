#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages rewy builds against, only those missing: with everything
# present it runs neither apt nor anything that needs the network. The CUDA toolkit (nvcc,
# cuBLAS, NCCL) is not installed here; without it the build is CPU-only.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libopenblas-dev libhdf5-dev libyaml-cpp-dev libsentencepiece-dev
  libcli11-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin
)
# Tools count as present when their command is (they may come from pip or a toolkit, as on the
# GPU machine's image, which is offline).
declare -A tool_of=([build-essential]=g++ [cmake]=cmake [ninja-build]=ninja [pkg-config]=pkg-config [openmpi-bin]=mpirun)

missing=()
for p in "${packages[@]}"; do
  if [ -n "${tool_of[$p]:-}" ] && command -v "${tool_of[$p]}" >/dev/null 2>&1; then continue; fi
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
else
  echo "setup: installing ${missing[*]}"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "setup: root or sudo is needed to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive timeout 300 apt-get update -q -o Acquire::Retries=1 ||
    ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    echo "setup: could not install ${missing[*]} (offline?); install them, then run this again" >&2
    exit 1
  fi
fi

nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || nvcc=/usr/local/cuda/bin/nvcc
if [ -z "$nvcc" ]; then
  echo "setup: no CUDA toolkit (nvcc): the build will be CPU-only"
else
  cuda_root=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
  echo "setup: CUDA toolkit at $cuda_root ($("$nvcc" --version | grep -o 'release [0-9.]*'))"
  [ -f "$cuda_root/include/nccl.h" ] || [ -f /usr/include/nccl.h ] ||
    echo "setup: warning: nccl.h not found next to the CUDA toolkit: the CUDA build will fail to configure" >&2
fi
