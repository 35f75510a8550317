// Data movement underneath Tensor: strided copy with dtype conversion (any device pair), fill,
// and host conversion to/from f64. Forward-only plumbing; the differentiable copy/transpose/cast
// ops live in engine/ops/copy_ops.h.
#pragma once
#include "engine/tensor.h"

namespace rewy {

// dst[i] = cast(src[i]) elementwise over the same shape; strided views allowed on both sides.
// CPU<->CUDA transfers stage through a contiguous buffer; casts happen on the GPU side.
void copy_cast(const Tensor& dst, const Tensor& src, const Stream* s = nullptr);
void fill(const Tensor& t, double value, const Stream* s = nullptr);

// CPU tensors only.
void host_from_f64(const Tensor& t, const double* src);
void host_to_f64(const Tensor& t, double* dst);

// Visits the element offsets (in elements, relative to data_ptr) of a strided view in row-major
// order of its shape.
template <typename F>
void for_each_offset(const Shape& shape, const Shape& strides, F&& f) {
  const int nd = int(shape.size());
  const int64_t n = shape_numel(shape);
  if (n == 0) return;
  std::vector<int64_t> idx(nd, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(i, off);
    for (int d = nd - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        off += strides[d];
        break;
      }
      off -= strides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

#if REWY_WITH_CUDA
namespace cuda_impl {
void copy_cast(const Tensor& dst, const Tensor& src, const Stream& s);  // both on the same GPU
void fill(const Tensor& t, double value, const Stream& s);
void memcpy_h2d(void* dst, const void* src, size_t bytes, const Stream& s);
void memcpy_d2h(void* dst, const void* src, size_t bytes, const Stream& s);  // synchronises s
}  // namespace cuda_impl
#endif

}  // namespace rewy
