// CPU reductions: sums accumulate in f64 for every dtype (the oracle is at least as accurate as
// its CUDA twin, which accumulates bf16/f32 in f32).
#include "engine/ops/detail.h"
#include "engine/ops/elementwise_math.h"

namespace rewy::detail::cpu_ops {
namespace {

using ew::compute_t;
using ew::load;
using ew::store;

void last(Reduce op, const Tensor& out, const Tensor& argmax, const Tensor& in, const Stream&) {
  dispatch_float(in.dtype(), "reduce", [&](auto z) {
    using T = decltype(z);
    const T* ip = in.data<T>();
    T* op_ = out.data<T>();
    const int64_t n = in.size(-1), rows = in.numel() / n;
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = ip + r * n;
      if (op == Reduce::Max) {
        int64_t best = 0;
        for (int64_t j = 1; j < n; ++j)
          if (load(row[j]) > load(row[best])) best = j;
        op_[r] = row[best];
        argmax.data<int64_t>()[r] = best;
        continue;
      }
      double acc = 0.0;
      for (int64_t j = 0; j < n; ++j) acc += double(load(row[j]));
      if (op == Reduce::Mean) acc /= double(n);
      op_[r] = store<T>(compute_t<T>(acc));
    }
  });
}

void last_backward(Reduce op, const Tensor& din, const Tensor& dout, const Tensor& argmax, const Stream&) {
  dispatch_float(din.dtype(), "reduce backward", [&](auto z) {
    using T = decltype(z);
    using C = compute_t<T>;
    const T* gp = dout.data<T>();
    T* dp = din.data<T>();
    const int64_t n = din.size(-1), rows = din.numel() / n;
    for (int64_t r = 0; r < rows; ++r) {
      T* row = dp + r * n;
      if (op == Reduce::Max) {
        const int64_t best = argmax.data<int64_t>()[r];
        for (int64_t j = 0; j < n; ++j) row[j] = j == best ? gp[r] : store<T>(C(0));
        continue;
      }
      const T g = op == Reduce::Mean ? store<T>(load(gp[r]) / C(n)) : gp[r];
      for (int64_t j = 0; j < n; ++j) row[j] = g;
    }
  });
}

void all(Reduce op, const Tensor& out, const Tensor& in, const Stream&) {
  dispatch_float(in.dtype(), "reduce", [&](auto z) {
    using T = decltype(z);
    const T* ip = in.data<T>();
    const int64_t n = in.numel();
    double acc = 0.0;
    for (int64_t i = 0; i < n; ++i) acc += double(load(ip[i]));
    if (op == Reduce::Mean) acc /= double(n);
    out.data<T>()[0] = store<T>(compute_t<T>(acc));
  });
}

void all_backward(Reduce op, const Tensor& din, const Tensor& dout, const Stream&) {
  dispatch_float(din.dtype(), "reduce backward", [&](auto z) {
    using T = decltype(z);
    using C = compute_t<T>;
    const int64_t n = din.numel();
    const C g = load(dout.data<T>()[0]);
    const T v = store<T>(op == Reduce::Mean ? g / C(n) : g);
    T* dp = din.data<T>();
    for (int64_t i = 0; i < n; ++i) dp[i] = v;
  });
}

}  // namespace

const ReduceBackend reduce{&last, &last_backward, &all, &all_backward};

}  // namespace rewy::detail::cpu_ops
