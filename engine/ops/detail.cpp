#include "engine/ops/detail.h"

namespace rewy::detail {

void check_defined(const char* op, const char* name, const Tensor& t) {
  REWY_CHECK(t.defined(), "{}: {} is undefined", op, name);
}

void check_floating(const char* op, const char* name, const Tensor& t) {
  check_defined(op, name, t);
  REWY_CHECK(is_floating(t.dtype()), "{}: {} is {}, expected a floating dtype (f32, bf16, f64)", op, name, t.str());
}

void check_operand(const char* op, const char* name, const Tensor& t, DType dt, Device d) {
  check_defined(op, name, t);
  REWY_CHECK(t.dtype() == dt, "{}: {} is {}, expected dtype {}", op, name, t.str(), dtype_name(dt));
  REWY_CHECK(t.device() == d, "{}: {} is {}, expected device {}", op, name, t.str(), d.str());
  REWY_CHECK(t.is_contiguous(), "{}: {} {} is not contiguous (strides {}); copy it with contiguous() first", op,
             name, t.str(), shape_str(t.strides()));
}

void check_shape(const char* op, const char* name, const Tensor& t, const Shape& expected, const char* of) {
  check_defined(op, name, t);
  REWY_CHECK(t.shape() == expected, "{}: {} has shape {}, expected {} ({})", op, name, shape_str(t.shape()),
             shape_str(expected), of);
}

Stream op_stream(const char* op, const Tensor& t, const Stream* s) {
  if (!s) return Stream::default_for(t.device());
  REWY_CHECK(s->device == t.device(), "{}: stream of {} used for tensors on {}", op, s->device.str(),
             t.device().str());
  return *s;
}

ColumnMajorGemm column_major(const GemmArgs& g) {
  ColumnMajorGemm c;
  c.m = g.n, c.n = g.m, c.k = g.k;
  // B stored [K, N] ([N, K] if trans_b) reads as [N, K] ([K, N]); op_first makes op(B)ᵀ [N, K].
  c.trans_first = g.trans_b;
  c.rows_first = g.trans_b ? g.k : g.n, c.cols_first = g.trans_b ? g.n : g.k, c.ld_first = g.ldb;
  // A stored [M, K] ([K, M] if trans_a) reads as [K, M] ([M, K]); op_second makes op(A)ᵀ [K, M].
  c.trans_second = g.trans_a;
  c.rows_second = g.trans_a ? g.m : g.k, c.cols_second = g.trans_a ? g.k : g.m, c.ld_second = g.lda;
  c.ldc = g.ldc;
  return c;
}

const Backend& backend(Device d, const char* op) {
  static const Backend cpu_backend{&cpu_ops::elementwise, &cpu_ops::reduce, &cpu_ops::random, &cpu_ops::gemm};
  if (d.is_cpu()) return cpu_backend;
#if REWY_WITH_CUDA
  static const Backend cuda_backend{&cuda_ops::elementwise, &cuda_ops::reduce, &cuda_ops::random, &cuda_ops::gemm};
  return cuda_backend;
#else
  REWY_FAIL("{} on {}: rewy was built without CUDA (-DREWY_CUDA=OFF)", op, d.str());
#endif
}

}  // namespace rewy::detail
