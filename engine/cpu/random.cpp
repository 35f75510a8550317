// CPU random fills: element i = value i of the Philox stream (the CUDA twin's formula).
#include "engine/ops/detail.h"
#include "engine/rng.h"

namespace rewy::detail::cpu_ops {
namespace {

void fill(const Tensor& t, bool normal, uint64_t seed, uint64_t offset, double a, double b, const Stream&) {
  dispatch_float(t.dtype(), "random fill", [&](auto z) {
    using T = decltype(z);
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i)
      p[i] = normal ? rng::normal_as<T>(seed, offset, uint64_t(i), a, b)
                    : rng::uniform_as<T>(seed, offset, uint64_t(i), a, b);
  });
}

}  // namespace

const RandomBackend random{&fill};

}  // namespace rewy::detail::cpu_ops
