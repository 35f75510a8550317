#include "engine/copy.h"

namespace rewy {
namespace {

template <typename T> double to_f64(T x) { return double(x); }
template <> double to_f64(bf16 x) { return double(float(x)); }
template <typename T> T from_f64(double x) { return T(x); }
template <> bf16 from_f64(double x) { return bf16(float(x)); }
template <> float from_f64(double x) { return float(x); }

template <typename F>
decltype(auto) dispatch_all(DType t, F&& f) {
  switch (t) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::BF16: return f(bf16{});
    case DType::I32: return f(int32_t{});
    case DType::I64: return f(int64_t{});
  }
  REWY_FAIL("bad dtype");
}

void host_copy_cast(const Tensor& dst, const Tensor& src) {
  dispatch_all(dst.dtype(), [&](auto d0) {
    using D = decltype(d0);
    dispatch_all(src.dtype(), [&](auto s0) {
      using S = decltype(s0);
      D* dp = static_cast<D*>(dst.data_ptr());
      const S* sp = static_cast<const S*>(src.data_ptr());
      if (dst.is_contiguous() && src.is_contiguous()) {
        const int64_t n = dst.numel();
        for (int64_t i = 0; i < n; ++i) dp[i] = from_f64<D>(to_f64(sp[i]));
        return;
      }
      std::vector<int64_t> doff;
      doff.reserve(size_t(dst.numel()));
      for_each_offset(dst.shape(), dst.strides(), [&](int64_t, int64_t o) { doff.push_back(o); });
      for_each_offset(src.shape(), src.strides(),
                      [&](int64_t i, int64_t o) { dp[doff[size_t(i)]] = from_f64<D>(to_f64(sp[o])); });
    });
  });
}

}  // namespace

void host_from_f64(const Tensor& t, const double* src) {
  REWY_CHECK(t.device().is_cpu(), "host_from_f64 on {}", t.str());
  dispatch_all(t.dtype(), [&](auto z) {
    using T = decltype(z);
    T* p = static_cast<T*>(t.data_ptr());
    for_each_offset(t.shape(), t.strides(), [&](int64_t i, int64_t o) { p[o] = from_f64<T>(src[i]); });
  });
}

void host_to_f64(const Tensor& t, double* dst) {
  REWY_CHECK(t.device().is_cpu(), "host_to_f64 on {}", t.str());
  dispatch_all(t.dtype(), [&](auto z) {
    using T = decltype(z);
    const T* p = static_cast<const T*>(t.data_ptr());
    for_each_offset(t.shape(), t.strides(), [&](int64_t i, int64_t o) { dst[i] = to_f64(p[o]); });
  });
}

void fill(const Tensor& t, double value, const Stream* s) {
  if (t.numel() == 0) return;
  if (t.device().is_cpu()) {
    dispatch_all(t.dtype(), [&](auto z) {
      using T = decltype(z);
      T* p = static_cast<T*>(t.data_ptr());
      const T v = from_f64<T>(value);
      for_each_offset(t.shape(), t.strides(), [&](int64_t, int64_t o) { p[o] = v; });
    });
    return;
  }
#if REWY_WITH_CUDA
  cuda_impl::fill(t, value, stream_or_default(t, s));
#else
  REWY_FAIL("fill on {}: rewy was built without CUDA", t.device().str());
#endif
}

void copy_cast(const Tensor& dst, const Tensor& src, const Stream* s) {
  REWY_CHECK(dst.shape() == src.shape(), "copy: shape {} into {}", shape_str(src.shape()), shape_str(dst.shape()));
  if (dst.numel() == 0) return;
  const Device dd = dst.device(), sd = src.device();
  if (dd.is_cpu() && sd.is_cpu()) return host_copy_cast(dst, src);
#if REWY_WITH_CUDA
  Stream st = s ? *s : Stream::default_for(dd.is_cuda() ? dd : sd);
  if (dd.is_cuda() && sd.is_cuda()) {
    if (dd == sd) {
      REWY_CHECK(st.device == dd, "copy on {}: stream of {} given", dd.str(), st.device.str());
      return cuda_impl::copy_cast(dst, src, st);
    }
    // Peer copy: stage through the host (rare path: checkpoints, tests), each side on a stream
    // of its own device (s where it belongs to one).
    const Stream src_stream = s && s->device == sd ? *s : Stream::default_for(sd);
    const Stream dst_stream = s && s->device == dd ? *s : Stream::default_for(dd);
    return copy_cast(dst, src.to(cpu(), &src_stream), &dst_stream);
  }
  if (dd.is_cuda()) {  // host -> device: contiguous host staging of src's dtype, cast on the GPU
    Tensor host = src.contiguous();
    if (dst.is_contiguous() && dst.dtype() == src.dtype())  // straight into dst
      return cuda_impl::memcpy_h2d(dst.data_ptr(), host.data_ptr(), host.nbytes(), st);
    Tensor dev = Tensor::empty(src.shape(), src.dtype(), dd, &st);
    cuda_impl::memcpy_h2d(dev.data_ptr(), host.data_ptr(), host.nbytes(), st);
    return cuda_impl::copy_cast(dst, dev, st);
  }
  // device -> host: cast/gather on the GPU, then one contiguous transfer
  if (src.is_contiguous() && dst.is_contiguous() && dst.dtype() == src.dtype())
    return cuda_impl::memcpy_d2h(dst.data_ptr(), src.data_ptr(), src.nbytes(), st);
  Tensor dev = Tensor::empty(src.shape(), dst.dtype(), sd, &st);
  cuda_impl::copy_cast(dev, src, st);
  if (dst.is_contiguous()) return cuda_impl::memcpy_d2h(dst.data_ptr(), dev.data_ptr(), dev.nbytes(), st);
  Tensor host = Tensor::empty(src.shape(), dst.dtype());
  cuda_impl::memcpy_d2h(host.data_ptr(), dev.data_ptr(), dev.nbytes(), st);
  host_copy_cast(dst, host);
#else
  REWY_FAIL("copy between {} and {}: rewy was built without CUDA", sd.str(), dd.str());
#endif
}

}  // namespace rewy
