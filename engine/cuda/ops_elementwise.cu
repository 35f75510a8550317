// CUDA elementwise ops: grid-stride kernels over the formulas of engine/ops/elementwise_math.h
// (the CPU twin's). No __restrict__: outputs may alias inputs.
#include "engine/cuda/ops_common.cuh"
#include "engine/ops/detail.h"
#include "engine/ops/elementwise_math.h"

namespace rewy::detail::cuda_ops {
namespace {

using ew::compute_t;
using ew::load;
using ew::store;

template <Unary OP, typename T> __global__ void unary_fwd_kernel(T* y, const T* x, int64_t n) {
  REWY_GRID_LOOP(i, n) y[i] = store<T>(ew::unary_fwd<OP>(load(x[i])));
}

template <Unary OP, typename T> __global__ void unary_bwd_kernel(T* dx, const T* dy, const T* x, const T* y, int64_t n) {
  using C = compute_t<T>;
  REWY_GRID_LOOP(i, n) {
    const C xv = x ? load(x[i]) : C(0), yv = y ? load(y[i]) : C(0);
    dx[i] = store<T>(ew::unary_bwd<OP>(load(dy[i]), xv, yv));
  }
}

template <Binary OP, typename T> __global__ void binary_fwd_kernel(T* out, const T* a, const T* b, int64_t n, int64_t nb) {
  REWY_GRID_LOOP(i, n) out[i] = store<T>(ew::binary_fwd<OP>(load(a[i]), load(b[i % nb])));
}

template <typename T> __global__ void mul_bcast_kernel(T* out, const T* g, const T* b, int64_t n, int64_t nb) {
  REWY_GRID_LOOP(i, n) out[i] = store<T>(load(g[i]) * load(b[i % nb]));
}

// db[j] (+)= Σ_r term(dout[r, j], a[r, j]): a 32-column tile per block, its 8 thread rows
// striding over the rows, then a fixed-order sum of the 8 partials (deterministic).
constexpr int kCols = 32, kRowThreads = 8;
template <Binary OP, typename T>
__global__ void column_sum_kernel(T* db, const T* g, const T* a, int64_t rows, int64_t nb, bool accumulate) {
  using C = compute_t<T>;
  __shared__ C part[kRowThreads][kCols];
  const int64_t j = blockIdx.x * int64_t(kCols) + threadIdx.x;
  C acc = C(0);
  if (j < nb)
    for (int64_t r = threadIdx.y; r < rows; r += kRowThreads) {
      const int64_t i = r * nb + j;
      acc += ew::binary_db_term<OP>(load(g[i]), a ? load(a[i]) : C(0));
    }
  part[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y != 0 || j >= nb) return;
  C sum = accumulate ? load(db[j]) : C(0);
  for (int t = 0; t < kRowThreads; ++t) sum += part[t][threadIdx.x];
  db[j] = store<T>(sum);
}

template <typename T> __global__ void axpby_kernel(T* y, const T* x, int64_t n, double alpha, double beta) {
  using C = compute_t<T>;
  const C al = C(alpha), be = C(beta);
  if (beta == 0.0) {
    REWY_GRID_LOOP(i, n) y[i] = store<T>(al * load(x[i]));
  } else {
    REWY_GRID_LOOP(i, n) y[i] = store<T>(al * load(x[i]) + be * load(y[i]));
  }
}

template <typename T> const T* ptr_or_null(const Tensor& t) { return t.defined() ? t.data<T>() : nullptr; }

void unary_forward(Unary op, const Tensor& y, const Tensor& x, const Stream& s) {
  DeviceGuard guard(x.device());
  const int64_t n = x.numel();
  dispatch_float(x.dtype(), "unary_forward", [&](auto z) {
    using T = decltype(z);
    ew::dispatch_unary(op, [&](auto tag) {
      unary_fwd_kernel<decltype(tag)::value, T><<<grid_for(n), kBlock, 0, stream_of(s)>>>(y.data<T>(), x.data<T>(), n);
    });
  });
  CUDA_CHECK_LAUNCH();
}

void unary_backward(Unary op, const Tensor& dx, const Tensor& dy, const Tensor& x, const Tensor& y, const Stream& s) {
  DeviceGuard guard(dy.device());
  const int64_t n = dy.numel();
  dispatch_float(dy.dtype(), "unary_backward", [&](auto z) {
    using T = decltype(z);
    ew::dispatch_unary(op, [&](auto tag) {
      unary_bwd_kernel<decltype(tag)::value, T><<<grid_for(n), kBlock, 0, stream_of(s)>>>(
          dx.data<T>(), dy.data<T>(), ptr_or_null<T>(x), ptr_or_null<T>(y), n);
    });
  });
  CUDA_CHECK_LAUNCH();
}

void binary_forward(Binary op, const Tensor& out, const Tensor& a, const Tensor& b, const Stream& s) {
  DeviceGuard guard(a.device());
  const int64_t n = a.numel(), nb = b.numel();
  dispatch_float(a.dtype(), "binary_forward", [&](auto z) {
    using T = decltype(z);
    ew::dispatch_binary(op, [&](auto tag) {
      binary_fwd_kernel<decltype(tag)::value, T>
          <<<grid_for(n), kBlock, 0, stream_of(s)>>>(out.data<T>(), a.data<T>(), b.data<T>(), n, nb);
    });
  });
  CUDA_CHECK_LAUNCH();
}

void binary_backward_a(Binary op, const Tensor& da, const Tensor& dout, const Tensor& b, const Stream& s) {
  DeviceGuard guard(dout.device());
  if (op != Binary::Mul) {
    if (da.data_ptr() != dout.data_ptr())
      CUDA_CHECK(cudaMemcpyAsync(da.data_ptr(), dout.data_ptr(), dout.nbytes(), cudaMemcpyDeviceToDevice, stream_of(s)));
    return;
  }
  const int64_t n = dout.numel(), nb = b.numel();
  dispatch_float(dout.dtype(), "binary_backward", [&](auto z) {
    using T = decltype(z);
    mul_bcast_kernel<T><<<grid_for(n), kBlock, 0, stream_of(s)>>>(da.data<T>(), dout.data<T>(), b.data<T>(), n, nb);
  });
  CUDA_CHECK_LAUNCH();
}

void binary_backward_b(Binary op, const Tensor& db, const Tensor& dout, const Tensor& a, bool accumulate,
                       const Stream& s) {
  DeviceGuard guard(dout.device());
  const int64_t nb = db.numel(), rows = dout.numel() / nb;
  const dim3 block(kCols, kRowThreads);
  const unsigned blocks = unsigned((nb + kCols - 1) / kCols);
  dispatch_float(dout.dtype(), "binary_backward", [&](auto z) {
    using T = decltype(z);
    ew::dispatch_binary(op, [&](auto tag) {
      column_sum_kernel<decltype(tag)::value, T>
          <<<blocks, block, 0, stream_of(s)>>>(db.data<T>(), dout.data<T>(), ptr_or_null<T>(a), rows, nb, accumulate);
    });
  });
  CUDA_CHECK_LAUNCH();
}

void axpby(const Tensor& y, double alpha, const Tensor& x, double beta, const Stream& s) {
  DeviceGuard guard(x.device());
  const int64_t n = x.numel();
  dispatch_float(x.dtype(), "axpby", [&](auto z) {
    using T = decltype(z);
    axpby_kernel<T><<<grid_for(n), kBlock, 0, stream_of(s)>>>(y.data<T>(), x.data<T>(), n, alpha, beta);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace

const ElementwiseBackend elementwise{&unary_forward,     &unary_backward,    &binary_forward,
                                     &binary_backward_a, &binary_backward_b, &axpby};

}  // namespace rewy::detail::cuda_ops
