#include <cuda_bf16.h>

#include "engine/copy.h"
#include "engine/cuda/check_cuda.h"

namespace rewy::cuda_impl {
namespace {

constexpr int kMaxDims = 8;

struct StridedLayout {
  int nd;
  int64_t shape[kMaxDims];
  int64_t dst_strides[kMaxDims];
  int64_t src_strides[kMaxDims];
};

template <typename T> __device__ __forceinline__ double load_f64(const T* p) { return double(*p); }
template <> __device__ __forceinline__ double load_f64(const __nv_bfloat16* p) { return double(__bfloat162float(*p)); }
template <typename T> __device__ __forceinline__ void store_f64(T* p, double v) { *p = T(v); }
template <> __device__ __forceinline__ void store_f64(float* p, double v) { *p = float(v); }
template <> __device__ __forceinline__ void store_f64(__nv_bfloat16* p, double v) { *p = __float2bfloat16_rn(float(v)); }

// float->bf16 through f64 would double-round; go through float for float sources.
template <typename D, typename S> __device__ __forceinline__ void convert(D* d, const S* s) { store_f64(d, load_f64(s)); }
template <> __device__ __forceinline__ void convert(__nv_bfloat16* d, const float* s) { *d = __float2bfloat16_rn(*s); }

template <typename D, typename S>
__global__ void strided_copy_kernel(D* __restrict__ dst, const S* __restrict__ src, int64_t n, StridedLayout L) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rem = i, doff = 0, soff = 0;
    for (int d = L.nd - 1; d >= 0; --d) {
      const int64_t c = rem % L.shape[d];
      rem /= L.shape[d];
      doff += c * L.dst_strides[d];
      soff += c * L.src_strides[d];
    }
    convert(dst + doff, src + soff);
  }
}

template <typename D, typename S>
__global__ void contiguous_copy_kernel(D* __restrict__ dst, const S* __restrict__ src, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    convert(dst + i, src + i);
}

template <typename T>
__global__ void fill_kernel(T* __restrict__ p, int64_t n, StridedLayout L, double v) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rem = i, off = 0;
    for (int d = L.nd - 1; d >= 0; --d) {
      off += (rem % L.shape[d]) * L.dst_strides[d];
      rem /= L.shape[d];
    }
    store_f64(p + off, v);
  }
}

template <typename F>
void dispatch_dev(DType t, F&& f) {
  switch (t) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::BF16: return f(__nv_bfloat16{});
    case DType::I32: return f(int32_t{});
    case DType::I64: return f(int64_t{});
  }
}

StridedLayout layout_of(const Tensor& dst, const Tensor* src) {
  REWY_CHECK(dst.dim() <= kMaxDims, "CUDA copy supports up to {} dims, got {}", kMaxDims, dst.dim());
  StridedLayout L{};
  L.nd = dst.dim();
  for (int d = 0; d < L.nd; ++d) {
    L.shape[d] = dst.size(d);
    L.dst_strides[d] = dst.stride(d);
    L.src_strides[d] = src ? src->stride(d) : 0;
  }
  return L;
}

int grid_for(int64_t n) { return int(std::min<int64_t>((n + 255) / 256, 65535)); }

}  // namespace

void copy_cast(const Tensor& dst, const Tensor& src, const Stream& s) {
  DeviceGuard g(dst.device());
  auto stream = static_cast<cudaStream_t>(s.handle);
  const int64_t n = dst.numel();
  if (n == 0) return;
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous()) {
    CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(), cudaMemcpyDeviceToDevice, stream));
    return;
  }
  const bool contiguous = dst.is_contiguous() && src.is_contiguous();
  const StridedLayout L = layout_of(dst, &src);
  dispatch_dev(dst.dtype(), [&](auto d0) {
    using D = decltype(d0);
    dispatch_dev(src.dtype(), [&](auto s0) {
      using S = decltype(s0);
      auto* dp = static_cast<D*>(dst.data_ptr());
      auto* sp = static_cast<const S*>(src.data_ptr());
      if (contiguous) contiguous_copy_kernel<D, S><<<grid_for(n), 256, 0, stream>>>(dp, sp, n);
      else strided_copy_kernel<D, S><<<grid_for(n), 256, 0, stream>>>(dp, sp, n, L);
      CUDA_CHECK_LAUNCH();
    });
  });
}

void fill(const Tensor& t, double value, const Stream& s) {
  DeviceGuard g(t.device());
  const int64_t n = t.numel();
  const StridedLayout L = layout_of(t, nullptr);
  dispatch_dev(t.dtype(), [&](auto z) {
    using T = decltype(z);
    fill_kernel<T><<<grid_for(n), 256, 0, static_cast<cudaStream_t>(s.handle)>>>(static_cast<T*>(t.data_ptr()), n, L,
                                                                                 value);
    CUDA_CHECK_LAUNCH();
  });
}

void memcpy_h2d(void* dst, const void* src, size_t bytes, const Stream& s) {
  DeviceGuard g(s.device);
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, static_cast<cudaStream_t>(s.handle)));
  // The host buffer may be freed once we return.
  CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(s.handle)));
}

void memcpy_d2h(void* dst, const void* src, size_t bytes, const Stream& s) {
  DeviceGuard g(s.device);
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(s.handle)));
  CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(s.handle)));
}

}  // namespace rewy::cuda_impl
