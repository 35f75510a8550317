// CUDA random fills: the CPU twin's per-element formula (engine/rng.h) in a grid-stride loop.
#include "engine/cuda/ops_common.cuh"
#include "engine/ops/detail.h"
#include "engine/rng.h"

namespace rewy::detail::cuda_ops {
namespace {

template <typename T>
__global__ void fill_kernel(T* p, int64_t n, bool normal, uint64_t seed, uint64_t offset, double a, double b) {
  REWY_GRID_LOOP(i, n) {
    p[i] = normal ? rng::normal_as<T>(seed, offset, uint64_t(i), a, b) : rng::uniform_as<T>(seed, offset, uint64_t(i), a, b);
  }
}

void fill(const Tensor& t, bool normal, uint64_t seed, uint64_t offset, double a, double b, const Stream& s) {
  DeviceGuard guard(t.device());
  const int64_t n = t.numel();
  dispatch_float(t.dtype(), "random fill", [&](auto z) {
    using T = decltype(z);
    fill_kernel<T><<<grid_for(n), kBlock, 0, stream_of(s)>>>(t.data<T>(), n, normal, seed, offset, a, b);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace

const RandomBackend random{&fill};

}  // namespace rewy::detail::cuda_ops
