// CPU elementwise ops: plain loops over the formulas of engine/ops/elementwise_math.h.
// Sums over rows (the broadcast operand's grad) accumulate in f64.
#include <algorithm>

#include "engine/ops/detail.h"
#include "engine/ops/elementwise_math.h"

namespace rewy::detail::cpu_ops {
namespace {

using ew::compute_t;
using ew::load;
using ew::store;

template <typename T> const T* ptr_or_null(const Tensor& t) { return t.defined() ? t.data<T>() : nullptr; }

void unary_forward(Unary op, const Tensor& y, const Tensor& x, const Stream&) {
  dispatch_float(x.dtype(), "unary_forward", [&](auto z) {
    using T = decltype(z);
    ew::dispatch_unary(op, [&](auto tag) {
      constexpr Unary OP = decltype(tag)::value;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      const int64_t n = x.numel();
      for (int64_t i = 0; i < n; ++i) yp[i] = store<T>(ew::unary_fwd<OP>(load(xp[i])));
    });
  });
}

void unary_backward(Unary op, const Tensor& dx, const Tensor& dy, const Tensor& x, const Tensor& y, const Stream&) {
  dispatch_float(dy.dtype(), "unary_backward", [&](auto z) {
    using T = decltype(z);
    using C = compute_t<T>;
    ew::dispatch_unary(op, [&](auto tag) {
      constexpr Unary OP = decltype(tag)::value;
      const T *dyp = dy.data<T>(), *xp = ptr_or_null<T>(x), *yp = ptr_or_null<T>(y);
      T* dxp = dx.data<T>();
      const int64_t n = dy.numel();
      for (int64_t i = 0; i < n; ++i) {
        const C xv = xp ? load(xp[i]) : C(0), yv = yp ? load(yp[i]) : C(0);
        dxp[i] = store<T>(ew::unary_bwd<OP>(load(dyp[i]), xv, yv));
      }
    });
  });
}

void binary_forward(Binary op, const Tensor& out, const Tensor& a, const Tensor& b, const Stream&) {
  dispatch_float(a.dtype(), "binary_forward", [&](auto z) {
    using T = decltype(z);
    ew::dispatch_binary(op, [&](auto tag) {
      constexpr Binary OP = decltype(tag)::value;
      const T *ap = a.data<T>(), *bp = b.data<T>();
      T* op_ = out.data<T>();
      const int64_t nb = b.numel(), rows = a.numel() / nb;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < nb; ++j)
          op_[r * nb + j] = store<T>(ew::binary_fwd<OP>(load(ap[r * nb + j]), load(bp[j])));
    });
  });
}

void binary_backward_a(Binary op, const Tensor& da, const Tensor& dout, const Tensor& b, const Stream&) {
  dispatch_float(dout.dtype(), "binary_backward", [&](auto z) {
    using T = decltype(z);
    const T* gp = dout.data<T>();
    T* dap = da.data<T>();
    const int64_t n = dout.numel();
    if (op != Binary::Mul) {
      if (dap != gp) std::copy(gp, gp + n, dap);
      return;
    }
    const T* bp = b.data<T>();
    const int64_t nb = b.numel();
    for (int64_t r = 0; r < n / nb; ++r)
      for (int64_t j = 0; j < nb; ++j) dap[r * nb + j] = store<T>(load(gp[r * nb + j]) * load(bp[j]));
  });
}

void binary_backward_b(Binary op, const Tensor& db, const Tensor& dout, const Tensor& a, bool accumulate,
                       const Stream&) {
  dispatch_float(dout.dtype(), "binary_backward", [&](auto z) {
    using T = decltype(z);
    ew::dispatch_binary(op, [&](auto tag) {
      constexpr Binary OP = decltype(tag)::value;
      const T *gp = dout.data<T>(), *ap = ptr_or_null<T>(a);
      T* dbp = db.data<T>();
      const int64_t nb = db.numel(), rows = dout.numel() / nb;
      for (int64_t j = 0; j < nb; ++j) {
        double acc = accumulate ? double(load(dbp[j])) : 0.0;
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t i = r * nb + j;
          acc += ew::binary_db_term<OP>(double(load(gp[i])), ap ? double(load(ap[i])) : 0.0);
        }
        dbp[j] = store<T>(compute_t<T>(acc));
      }
    });
  });
}

void axpby(const Tensor& y, double alpha, const Tensor& x, double beta, const Stream&) {
  dispatch_float(x.dtype(), "axpby", [&](auto z) {
    using T = decltype(z);
    using C = compute_t<T>;
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    const int64_t n = x.numel();
    const C al = C(alpha), be = C(beta);
    if (beta == 0.0)
      for (int64_t i = 0; i < n; ++i) yp[i] = store<T>(al * load(xp[i]));
    else
      for (int64_t i = 0; i < n; ++i) yp[i] = store<T>(al * load(xp[i]) + be * load(yp[i]));
  });
}

}  // namespace

const ElementwiseBackend elementwise{&unary_forward,     &unary_backward,    &binary_forward,
                                     &binary_backward_a, &binary_backward_b, &axpby};

}  // namespace rewy::detail::cpu_ops
