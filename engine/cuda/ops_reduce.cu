// CUDA reductions: one warp per row for the last dim, one block for all elements. bf16 and f32
// accumulate in f32, f64 in f64; the order is fixed, so results are deterministic.
#include <cfloat>

#include "engine/cuda/ops_common.cuh"
#include "engine/ops/detail.h"
#include "engine/ops/elementwise_math.h"

namespace rewy::detail::cuda_ops {
namespace {

using ew::compute_t;
using ew::load;
using ew::store;

constexpr int kWarps = kBlock / 32;

template <typename T> __global__ void sum_last_kernel(T* out, const T* in, int64_t rows, int64_t n, bool mean) {
  using C = compute_t<T>;
  const int lane = threadIdx.x & 31;
  for (int64_t r = blockIdx.x * int64_t(kWarps) + threadIdx.x / 32; r < rows; r += int64_t(gridDim.x) * kWarps) {
    C acc = C(0);
    for (int64_t j = lane; j < n; j += 32) acc += load(in[r * n + j]);
    acc = warp_sum(acc);
    if (lane == 0) out[r] = store<T>(mean ? acc / C(n) : acc);
  }
}

// The first index of the row's max: each lane keeps its own first max, then lanes combine
// preferring the larger value and, on ties, the smaller index.
template <typename T> __global__ void max_last_kernel(T* out, int64_t* argmax, const T* in, int64_t rows, int64_t n) {
  using C = compute_t<T>;
  const int lane = threadIdx.x & 31;
  for (int64_t r = blockIdx.x * int64_t(kWarps) + threadIdx.x / 32; r < rows; r += int64_t(gridDim.x) * kWarps) {
    C best = -C(INFINITY);
    int64_t idx = INT64_MAX;
    for (int64_t j = lane; j < n; j += 32) {
      const C v = load(in[r * n + j]);
      if (idx == INT64_MAX || v > best) best = v, idx = j;
    }
    for (int o = 16; o > 0; o >>= 1) {
      const C ob = __shfl_xor_sync(0xffffffffu, best, o);
      const int64_t oi = __shfl_xor_sync(0xffffffffu, idx, o);
      if (ob > best || (ob == best && oi < idx)) best = ob, idx = oi;
    }
    if (lane == 0) {
      out[r] = in[r * n + idx];
      argmax[r] = idx;
    }
  }
}

template <typename T>
__global__ void last_bwd_kernel(T* din, const T* dout, const int64_t* argmax, int64_t total, int64_t n, int op) {
  using C = compute_t<T>;
  REWY_GRID_LOOP(i, total) {
    const int64_t r = i / n, j = i - r * n;
    const T g = dout[r];
    if (op == int(Reduce::Max)) din[i] = j == argmax[r] ? g : store<T>(C(0));
    else if (op == int(Reduce::Mean)) din[i] = store<T>(load(g) / C(n));
    else din[i] = g;
  }
}

constexpr int kAllThreads = 1024;
template <typename T> __global__ void sum_all_kernel(T* out, const T* in, int64_t n, bool mean) {
  using C = compute_t<T>;
  __shared__ C part[kAllThreads / 32];
  C acc = C(0);
  for (int64_t i = threadIdx.x; i < n; i += kAllThreads) acc += load(in[i]);
  acc = warp_sum(acc);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x >= 32) return;
  acc = warp_sum(part[threadIdx.x]);
  if (threadIdx.x == 0) out[0] = store<T>(mean ? acc / C(n) : acc);
}

template <typename T> __global__ void all_bwd_kernel(T* din, const T* dout, int64_t n, bool mean) {
  using C = compute_t<T>;
  const C g = load(dout[0]);
  const T v = store<T>(mean ? g / C(n) : g);
  REWY_GRID_LOOP(i, n) din[i] = v;
}

void last(Reduce op, const Tensor& out, const Tensor& argmax, const Tensor& in, const Stream& s) {
  DeviceGuard guard(in.device());
  const int64_t n = in.size(-1), rows = in.numel() / n;
  dispatch_float(in.dtype(), "reduce", [&](auto z) {
    using T = decltype(z);
    if (op == Reduce::Max)
      max_last_kernel<T><<<grid_for(rows, kWarps), kBlock, 0, stream_of(s)>>>(out.data<T>(), argmax.data<int64_t>(),
                                                                              in.data<T>(), rows, n);
    else
      sum_last_kernel<T><<<grid_for(rows, kWarps), kBlock, 0, stream_of(s)>>>(out.data<T>(), in.data<T>(), rows, n,
                                                                              op == Reduce::Mean);
  });
  CUDA_CHECK_LAUNCH();
}

void last_backward(Reduce op, const Tensor& din, const Tensor& dout, const Tensor& argmax, const Stream& s) {
  DeviceGuard guard(din.device());
  const int64_t total = din.numel(), n = din.size(-1);
  const int64_t* am = argmax.defined() ? argmax.data<int64_t>() : nullptr;
  dispatch_float(din.dtype(), "reduce backward", [&](auto z) {
    using T = decltype(z);
    last_bwd_kernel<T><<<grid_for(total), kBlock, 0, stream_of(s)>>>(din.data<T>(), dout.data<T>(), am, total, n,
                                                                     int(op));
  });
  CUDA_CHECK_LAUNCH();
}

void all(Reduce op, const Tensor& out, const Tensor& in, const Stream& s) {
  DeviceGuard guard(in.device());
  dispatch_float(in.dtype(), "reduce", [&](auto z) {
    using T = decltype(z);
    sum_all_kernel<T><<<1, kAllThreads, 0, stream_of(s)>>>(out.data<T>(), in.data<T>(), in.numel(),
                                                          op == Reduce::Mean);
  });
  CUDA_CHECK_LAUNCH();
}

void all_backward(Reduce op, const Tensor& din, const Tensor& dout, const Stream& s) {
  DeviceGuard guard(din.device());
  const int64_t n = din.numel();
  dispatch_float(din.dtype(), "reduce backward", [&](auto z) {
    using T = decltype(z);
    all_bwd_kernel<T><<<grid_for(n), kBlock, 0, stream_of(s)>>>(din.data<T>(), dout.data<T>(), n, op == Reduce::Mean);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace

const ReduceBackend reduce{&last, &last_backward, &all, &all_backward};

}  // namespace rewy::detail::cuda_ops
