// Benchmark-sized random problems generated on the GPU with the same Philox streams and
// distributions as make_random_case (kernels/delta/random_inputs.cpp).
#include <cuda_bf16.h>

#include <cmath>

#include "engine/cuda/check_cuda.h"
#include "engine/rng.h"
#include "kernels/delta/random_inputs.h"

namespace rewy::delta {
namespace {

enum Dist : int { kNormal, kUniform, kSigmoidUniform, kLogsigmoid16, kSafeGate5, kNormalTenth, kUniformGate };

template <typename T>
__global__ void fill_kernel(T* out, int64_t n, uint64_t seed, uint64_t stream, int dist, int round_bf16, double gate) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    double x;
    switch (dist) {
      case kUniform: x = rng::uniform(seed, stream, uint64_t(i)); break;
      case kSigmoidUniform: x = 1.0 / (1.0 + exp(-double(rng::uniform(seed, stream, uint64_t(i))))); break;
      case kLogsigmoid16: {
        const double z = rng::normal_f64(seed, stream, uint64_t(i));
        x = (z < 0 ? z - log1p(exp(z)) : -log1p(exp(-z))) / 16.0;
        break;
      }
      case kSafeGate5: x = -5.0 / (1.0 + exp(-rng::normal_f64(seed, stream, uint64_t(i)))); break;
      case kNormalTenth: x = 0.1 * rng::normal_f64(seed, stream, uint64_t(i)); break;
      case kUniformGate: x = gate * (1.0 - rng::uniform(seed, stream, uint64_t(i))); break;  // as Gates::Uniform's
      default: x = rng::normal_f64(seed, stream, uint64_t(i)); break;
    }
    if constexpr (sizeof(T) == 2) out[i] = __float2bfloat16_rn(float(x));
    else out[i] = round_bf16 ? __bfloat162float(__float2bfloat16_rn(float(x))) : float(x);
  }
}

// One warp per row of D: normal draws, l2-normalised, rounded to bf16.
__global__ void l2_rows_kernel(__nv_bfloat16* out, int64_t rows, int D, uint64_t seed, uint64_t stream) {
  const int64_t row = blockIdx.x * int64_t(blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  double s = 0;
  for (int d = lane; d < D; d += 32) {
    const double z = rng::normal_f64(seed, stream, uint64_t(row * D + d));
    s += z * z;
  }
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
  const double inv = 1.0 / sqrt(fmax(s, 1e-30));
  for (int d = lane; d < D; d += 32)
    out[row * D + d] = __float2bfloat16_rn(float(rng::normal_f64(seed, stream, uint64_t(row * D + d)) * inv));
}

int grid(int64_t n) { return int(std::min<int64_t>((n + 255) / 256, 4096)); }

}  // namespace

RandomCase make_random_case_cuda(const RandomSpec& sp, Device dev) {
  REWY_CHECK(sp.seqlens.empty(), "make_random_case_cuda: varlen is not supported (use make_random_case)");
  REWY_CHECK(sp.gates != Gates::Constant, "make_random_case_cuda: constant gates are not supported (use make_random_case)");
  REWY_CHECK(!sp.wide_beta, "make_random_case_cuda: wide beta is not supported (use make_random_case)");
  DeviceGuard guard(dev);
  const Stream s = Stream::default_for(dev);
  auto st = static_cast<cudaStream_t>(s.handle);
  const int64_t B = sp.B, T = sp.T, H = sp.H, K = sp.K, V = sp.V, N = B;
  uint64_t stream = 0;  // same stream numbering as make_random_case
  auto bf = [&](Shape shape, int dist) {
    Tensor t = Tensor::empty(shape, DType::BF16, dev, &s);
    fill_kernel<<<grid(t.numel()), 256, 0, st>>>(static_cast<__nv_bfloat16*>(t.data_ptr()), t.numel(), sp.seed, stream++,
                                                 dist, 1, sp.gate);
    CUDA_CHECK_LAUNCH();
    return t;
  };
  auto f32 = [&](Shape shape, int dist) {
    Tensor t = Tensor::empty(shape, DType::F32, dev, &s);
    fill_kernel<<<grid(t.numel()), 256, 0, st>>>(static_cast<float*>(t.data_ptr()), t.numel(), sp.seed, stream++, dist, 0,
                                                 sp.gate);
    CUDA_CHECK_LAUNCH();
    return t;
  };
  auto l2 = [&](Shape shape) {
    Tensor t = Tensor::empty(shape, DType::BF16, dev, &s);
    const int64_t rows = t.numel() / K;
    l2_rows_kernel<<<int((rows + 7) / 8), 256, 0, st>>>(static_cast<__nv_bfloat16*>(t.data_ptr()), rows, int(K), sp.seed,
                                                       stream++);
    CUDA_CHECK_LAUNCH();
    return t;
  };
  RandomCase c;
  c.in.q = l2({B, T, H, K});
  c.in.k = l2({B, T, H, K});
  c.in.v = bf({B, T, H, V}, kNormal);
  if (has_beta(sp.variant)) c.in.beta = bf({B, T, H}, kSigmoidUniform);
  if (has_gate(sp.variant)) {
    const Shape gs = channel_gate(sp.variant) ? Shape{B, T, H, K} : Shape{B, T, H};
    c.in.g = f32(gs, sp.gates == Gates::SafeGate  ? kSafeGate5
                     : sp.gates == Gates::Uniform ? kUniformGate
                                                  : kLogsigmoid16);
  }
  if (sp.variant == Variant::GDN2) {
    c.in.b = bf({B, T, H, K}, kUniform);
    c.in.w = bf({B, T, H, V}, kUniform);
  }
  if (sp.h0) c.in.h0 = f32({N, H, K, V}, kNormalTenth);
  c.dout = bf({B, T, H, V}, kNormal);
  if (sp.dht) c.dht = f32({N, H, K, V}, kNormal);
  return c;
}

}  // namespace rewy::delta
