#include "engine/ops/matmul.h"

#include <algorithm>
#include <climits>

#include "engine/copy.h"
#include "engine/ops/detail.h"
#include "engine/ops/elementwise.h"

namespace rewy {
namespace {

// A matrix operand as stored (before op()): rows x cols with row stride ld, and the stride
// between batches (0 when one 2-D matrix serves every batch).
struct Mat {
  int64_t rows = 0, cols = 0, ld = 0, batch_stride = 0;
  bool batched = false;
};

Mat describe(const char* op, const char* name, const Tensor& t) {
  detail::check_floating(op, name, t);
  REWY_CHECK(t.dim() == 2 || t.dim() == 3, "{}: {} is {}, expected 2-D or 3-D (batched)", op, name, t.str());
  Mat m;
  m.rows = t.size(-2);
  m.cols = t.size(-1);
  REWY_CHECK(m.cols <= 1 || t.stride(-1) == 1,
             "{}: {} {} has strides {}; its last dim needs unit stride (pass a transpose as a flag)", op, name,
             t.str(), shape_str(t.strides()));
  // A single row's stride is never used; BLAS still wants ld >= cols.
  m.ld = m.rows > 1 ? t.stride(-2) : std::max<int64_t>(m.cols, 1);
  REWY_CHECK(m.ld >= m.cols, "{}: {} {} has overlapping rows (strides {})", op, name, t.str(),
             shape_str(t.strides()));
  m.ld = std::max<int64_t>(m.ld, 1);
  m.batched = t.dim() == 3;
  m.batch_stride = m.batched && t.size(0) > 1 ? t.stride(0) : 0;
  return m;
}

bool fits_int(int64_t v) { return v <= INT_MAX; }

}  // namespace

void matmul_forward(Tensor& C, const Tensor& A, const Tensor& B, bool trans_a, bool trans_b, double alpha,
                    double beta, const Stream* s) {
  const char* op = "matmul_forward";
  const Mat a = describe(op, "A", A), b = describe(op, "B", B), c = describe(op, "C", C);
  REWY_CHECK(A.dtype() == B.dtype(), "{}: A is {} but B is {}", op, A.str(), B.str());
  REWY_CHECK(C.dtype() == A.dtype() || (A.dtype() == DType::BF16 && C.dtype() == DType::F32),
             "{}: C is {}; expected {}{} for A {}", op, C.str(), dtype_name(A.dtype()),
             A.dtype() == DType::BF16 ? " or f32" : "", A.str());
  REWY_CHECK(A.device() == B.device() && A.device() == C.device(), "{}: A on {}, B on {}, C on {}", op,
             A.device().str(), B.device().str(), C.device().str());
  const int64_t M = trans_a ? a.cols : a.rows, K = trans_a ? a.rows : a.cols;
  const int64_t Kb = trans_b ? b.cols : b.rows, N = trans_b ? b.rows : b.cols;
  REWY_CHECK(K == Kb && c.rows == M && c.cols == N,
             "{}: shapes do not match: op(A) is [{}, {}] (A {}{}), op(B) is [{}, {}] (B {}{}), C is {}", op, M, K,
             shape_str(A.shape()), trans_a ? ", transposed" : "", Kb, N, shape_str(B.shape()),
             trans_b ? ", transposed" : "", shape_str(C.shape()));
  const int64_t batch = c.batched ? C.size(0) : 1;
  REWY_CHECK(c.batched == (a.batched || b.batched), "{}: C {} must be batched exactly when A {} or B {} is", op,
             C.str(), A.str(), B.str());
  REWY_CHECK((!a.batched || A.size(0) == batch) && (!b.batched || B.size(0) == batch),
             "{}: batch sizes differ: A {}, B {}, C {}", op, shape_str(A.shape()), shape_str(B.shape()),
             shape_str(C.shape()));
  REWY_CHECK(fits_int(M) && fits_int(N) && fits_int(K) && fits_int(batch) && fits_int(a.ld) && fits_int(b.ld) &&
                 fits_int(c.ld),
             "{}: sizes beyond int32 (A {}, B {}, C {})", op, A.str(), B.str(), C.str());
  const Stream st = detail::op_stream(op, C, s);
  if (M == 0 || N == 0 || batch == 0) return;
  if (K == 0) {  // an empty sum: C = beta·C
    if (beta == 0.0) return fill(C, 0.0, &st);
    return scale_forward(C, C, beta, &st);
  }
  detail::GemmArgs g;
  g.m = M, g.n = N, g.k = K, g.batch = batch;
  g.trans_a = trans_a, g.trans_b = trans_b;
  g.a = A.data_ptr(), g.lda = a.ld, g.stride_a = a.batch_stride;
  g.b = B.data_ptr(), g.ldb = b.ld, g.stride_b = b.batch_stride;
  g.c = C.data_ptr(), g.ldc = c.ld, g.stride_c = c.batch_stride;
  g.ab_dtype = A.dtype(), g.c_dtype = C.dtype();
  g.alpha = alpha, g.beta = beta;
  g.device = C.device();
  // x·W with a shared W: when A's and C's batches are stacked rows, it is one tall product.
  if (batch > 1 && g.stride_b == 0 && !trans_a && g.stride_a == M * g.lda && g.stride_c == M * g.ldc &&
      fits_int(batch * M)) {
    g.m = batch * M;
    g.batch = 1;
    g.stride_a = g.stride_c = 0;
  }
  detail::backend(C.device(), op).gemm(g, st);
}

namespace {

// d = Σ_b alpha·op(X_b)·op(Y_b) over the batch, for the grad of a shared 2-D operand: one product
// over stacked rows when the batches of X and Y are contiguous, else one product per batch.
void matmul_sum_batches(Tensor& d, const Tensor& X, const Tensor& Y, bool tx, bool ty, double alpha, double beta,
                        const Stream& st) {
  if (X.dim() == 3 && Y.dim() == 3 && tx && !ty && X.is_contiguous() && Y.is_contiguous()) {
    const Tensor x = X.view({-1, X.size(-1)}), y = Y.view({-1, Y.size(-1)});
    return matmul_forward(d, x, y, true, false, alpha, beta, &st);
  }
  const int64_t batch = X.dim() == 3 ? X.size(0) : Y.size(0);
  for (int64_t i = 0; i < batch; ++i) {
    const Tensor x = X.dim() == 3 ? X.select(0, i) : X, y = Y.dim() == 3 ? Y.select(0, i) : Y;
    matmul_forward(d, x, y, tx, ty, alpha, i == 0 ? beta : 1.0, &st);
  }
}

// grad = alpha·op(X)·op(Y), summed over the batch when grad is a shared 2-D operand of a batched product.
void matmul_grad(Tensor& grad, bool shared, const Tensor& X, const Tensor& Y, bool tx, bool ty, double alpha,
                 double beta, const Stream& st) {
  if (shared) return matmul_sum_batches(grad, X, Y, tx, ty, alpha, beta, st);
  matmul_forward(grad, X, Y, tx, ty, alpha, beta, &st);
}

}  // namespace

void matmul_backward(Tensor& dA, Tensor& dB, const Tensor& dC, const Tensor& A, const Tensor& B, bool trans_a,
                     bool trans_b, double alpha, bool accumulate_db, const Stream* s) {
  const char* op = "matmul_backward";
  detail::check_defined(op, "dC", dC);
  detail::check_defined(op, "A", A);
  detail::check_defined(op, "B", B);
  REWY_CHECK(A.dtype() == B.dtype() && dC.dtype() == A.dtype(),
             "{}: dC {}, A {} and B {} need one dtype (bf16 products take a bf16 dC)", op, dC.str(), A.str(), B.str());
  const bool batched = dC.dim() == 3;
  const Stream st = detail::op_stream(op, dC, s);
  if (dA.defined()) {
    detail::check_shape(op, "dA", dA, A.shape(), "the shape of A");
    const bool shared = batched && A.dim() == 2;
    // dA = alpha·dC·op(B)ᵀ, or its transpose when A is stored transposed.
    if (!trans_a) matmul_grad(dA, shared, dC, B, false, !trans_b, alpha, 0.0, st);
    else matmul_grad(dA, shared, B, dC, trans_b, true, alpha, 0.0, st);
  }
  if (dB.defined()) {
    detail::check_shape(op, "dB", dB, B.shape(), "the shape of B");
    const bool shared = batched && B.dim() == 2;
    const double beta = accumulate_db ? 1.0 : 0.0;
    // dB = alpha·op(A)ᵀ·dC, or its transpose when B is stored transposed.
    if (!trans_b) matmul_grad(dB, shared, A, dC, !trans_a, false, alpha, beta, st);
    else matmul_grad(dB, shared, dC, A, true, trans_a, alpha, beta, st);
  }
}

Tensor matmul(const Tensor& A, const Tensor& B, bool trans_a, bool trans_b, const Stream* s) {
  detail::check_defined("matmul", "A", A);
  detail::check_defined("matmul", "B", B);
  REWY_CHECK(A.dim() >= 2 && B.dim() >= 2, "matmul: A {} and B {} must be at least 2-D", A.str(), B.str());
  const int64_t M = trans_a ? A.size(-1) : A.size(-2), N = trans_b ? B.size(-2) : B.size(-1);
  Shape shape{M, N};
  if (A.dim() == 3 || B.dim() == 3) shape.insert(shape.begin(), A.dim() == 3 ? A.size(0) : B.size(0));
  Tensor C = Tensor::empty(shape, A.dtype(), A.device(), s);
  matmul_forward(C, A, B, trans_a, trans_b, 1.0, 0.0, s);
  return C;
}

}  // namespace rewy
