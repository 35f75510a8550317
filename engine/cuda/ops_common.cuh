// Launch helpers shared by the CUDA op files (engine/cuda/ops_*.cu); warp_sum also by the
// delta-rule kernels.
#pragma once
#include <algorithm>
#include <cstdint>

#include "engine/cuda/check_cuda.h"
#include "engine/device.h"

namespace rewy::detail::cuda_ops {

constexpr int kBlock = 256;

// Enough blocks for one element per thread, capped: the kernels loop grid-stride.
inline int grid_for(int64_t n, int per_block = kBlock) {
  return int(std::max<int64_t>(1, std::min<int64_t>((n + per_block - 1) / per_block, int64_t(1) << 16)));
}

inline cudaStream_t stream_of(const Stream& s) { return static_cast<cudaStream_t>(s.handle); }

// Grid-stride loop over [0, n).
#define REWY_GRID_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

template <typename C> __device__ __forceinline__ C warp_sum(C v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

}  // namespace rewy::detail::cuda_ops
