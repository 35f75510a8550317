// Matmul on CPU: against an f64 triple loop for odd shapes, every transpose, alpha/beta,
// batches (strided and shared operands) and padded rows; backward against finite differences.
#include <gtest/gtest.h>

#include "engine/gradcheck.h"
#include "engine/ops/detail.h"
#include "engine/ops/matmul.h"
#include "test_engine_util.h"

using namespace rewy;
using namespace rewy::test;

namespace {

// C = alpha·op(A)·op(B) + beta·C0 in f64, and per element the scale Σ_k |alpha·a_ik·b_kj| +
// |beta·c0| that bounds the rounding error of any summation order.
struct Ref {
  std::vector<double> c, scale;
};
Ref reference(const Tensor& A, const Tensor& B, bool ta, bool tb, double alpha, double beta, const Tensor& C0) {
  const std::vector<double> a = A.to_vector(), b = B.to_vector();
  const std::vector<double> c0 = C0.defined() ? C0.to_vector() : std::vector<double>();
  const int64_t ar = A.size(-2), ac = A.size(-1), br = B.size(-2), bc = B.size(-1);
  const int64_t M = ta ? ac : ar, K = ta ? ar : ac, N = tb ? br : bc;
  const int64_t batch = std::max(A.dim() == 3 ? A.size(0) : 1, B.dim() == 3 ? B.size(0) : 1);
  Ref r;
  r.c.assign(size_t(batch * M * N), 0.0);
  r.scale = r.c;
  for (int64_t z = 0; z < batch; ++z) {
    const double* az = a.data() + (A.dim() == 3 ? z * ar * ac : 0);
    const double* bz = b.data() + (B.dim() == 3 ? z * br * bc : 0);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double sum = 0, scale = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double p = (ta ? az[k * ac + i] : az[i * ac + k]) * (tb ? bz[j * bc + k] : bz[k * bc + j]);
          sum += p;
          scale += std::abs(p);
        }
        const size_t o = size_t((z * M + i) * N + j);
        const double prev = c0.empty() ? 0.0 : beta * c0[o];
        r.c[o] = alpha * sum + prev;
        r.scale[o] = std::abs(alpha) * scale + std::abs(prev);
      }
  }
  return r;
}

// A K-term dot product rounds at most K+2 times in the accumulation type (u32 for bf16 and
// f32 inputs, which multiply exactly into f32 for bf16): |err| <= (K+2)·u·scale. A bf16 output
// adds one rounding of the result.
::testing::AssertionResult close_to(const Tensor& C, const Ref& ref, DType ab, int64_t K) {
  const double u_acc = ab == DType::F64 ? unit_roundoff(DType::F64) : kU32;
  const double u_out = C.dtype() == DType::BF16 ? unit_roundoff(DType::BF16) : 0.0;
  const std::vector<double> c = C.to_vector();
  for (size_t i = 0; i < c.size(); ++i) {
    const double tol = 2 * double(K + 2) * u_acc * ref.scale[i] + u_out * std::abs(ref.c[i]);
    if (!(std::abs(c[i] - ref.c[i]) <= tol))
      return ::testing::AssertionFailure() << "element " << i << ": " << c[i] << " vs " << ref.c[i] << " (tol " << tol
                                           << ")";
  }
  return ::testing::AssertionSuccess();
}

struct Types {
  DType ab, c;
};
const Types kTypes[] = {{DType::F64, DType::F64}, {DType::F32, DType::F32}, {DType::BF16, DType::BF16},
                        {DType::BF16, DType::F32}};

TEST(EngineMatmul, OddShapesAndTransposesMatchF64) {
  REWY_TEST_SEED(seed);
  const int64_t shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {5, 1, 9}, {2, 7, 1}};  // M, N, K
  for (const auto& s : shapes)
    for (const Types& ty : kTypes)
      for (int t = 0; t < 4; ++t) {
        const bool ta = t & 1, tb = t & 2;
        const int64_t M = s[0], N = s[1], K = s[2];
        SCOPED_TRACE(fmt::format("{}x{}x{} ta={} tb={} {}->{}", M, N, K, ta, tb, dtype_name(ty.ab), dtype_name(ty.c)));
        const Tensor A = uniform(stored(M, K, ta), ty.ab, seed, 0), B = uniform(stored(K, N, tb), ty.ab, seed, 1);
        const Tensor C0 = uniform({M, N}, ty.c, seed, 2);
        Tensor C = poisoned({M, N}, ty.c);
        matmul_forward(C, A, B, ta, tb, 1.5);
        EXPECT_TRUE(close_to(C, reference(A, B, ta, tb, 1.5, 0.0, Tensor{}), ty.ab, K));
        Tensor D = C0.clone();
        matmul_forward(D, A, B, ta, tb, -0.75, 0.5);
        EXPECT_TRUE(close_to(D, reference(A, B, ta, tb, -0.75, 0.5, C0), ty.ab, K));
      }
}

TEST(EngineMatmul, BatchedSharedAndPaddedOperands) {
  REWY_TEST_SEED(seed);
  const int64_t Z = 3, M = 6, N = 5, K = 7;
  for (const Types& ty : kTypes)
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      SCOPED_TRACE(fmt::format("ta={} tb={} {}->{}", ta, tb, dtype_name(ty.ab), dtype_name(ty.c)));
      Shape sa = stored(M, K, ta), sb = stored(K, N, tb);
      const Tensor A2 = uniform(sa, ty.ab, seed, 0), B2 = uniform(sb, ty.ab, seed, 1);
      sa.insert(sa.begin(), Z);
      sb.insert(sb.begin(), Z);
      const Tensor A3 = uniform(sa, ty.ab, seed, 2), B3 = uniform(sb, ty.ab, seed, 3);
      // batched x batched, batched x shared, shared x batched
      const std::pair<Tensor, Tensor> pairs[] = {{A3, B3}, {A3, B2}, {A2, B3}};
      for (const auto& [A, B] : pairs) {
        Tensor C = poisoned({Z, M, N}, ty.c);
        matmul_forward(C, A, B, ta, tb);
        EXPECT_TRUE(close_to(C, reference(A, B, ta, tb, 1.0, 0.0, Tensor{}), ty.ab, K));
        EXPECT_TRUE(close_to(matmul(A, B, ta, tb), reference(A, B, ta, tb, 1.0, 0.0, Tensor{}), ty.ab, K));
      }
      // Rows padded (a slice of a wider matrix) and a strided batch of C.
      Shape wide = sa;
      wide.back() += 3;
      const Tensor Ap = uniform(wide, ty.ab, seed, 4).slice(2, 1, 1 + sa.back());
      Tensor Cbig = poisoned({Z, M + 2, N + 4}, ty.c);
      Tensor Cv = Cbig.slice(1, 1, 1 + M).slice(2, 2, 2 + N);
      matmul_forward(Cv, Ap, B3, ta, tb);
      EXPECT_TRUE(close_to(Cv, reference(Ap, B3, ta, tb, 1.0, 0.0, Tensor{}), ty.ab, K));
    }
}

TEST(EngineMatmul, EmptyInnerDimScalesC) {
  const Tensor A = Tensor::empty({3, 0}, DType::F32), B = Tensor::empty({0, 2}, DType::F32);
  Tensor C = Tensor::full({3, 2}, 4.0, DType::F32);
  matmul_forward(C, A, B, false, false, 1.0, 0.5);
  EXPECT_EQ(C.to_vector(), std::vector<double>(6, 2.0));
  Tensor D = poisoned({3, 2}, DType::F32);
  matmul_forward(D, A, B);
  EXPECT_EQ(D.to_vector(), std::vector<double>(6, 0.0));
}

TEST(EngineMatmul, BackwardMatchesFiniteDifferences) {
  REWY_TEST_SEED(seed);
  const int64_t Z = 2, M = 4, N = 3, K = 5;
  struct Case {
    bool batch_a, batch_b;
  };
  for (const Case& cs : {Case{false, false}, Case{true, true}, Case{true, false}, Case{false, true}})
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      SCOPED_TRACE(fmt::format("batched A={} B={} ta={} tb={}", cs.batch_a, cs.batch_b, ta, tb));
      Shape sa = stored(M, K, ta), sb = stored(K, N, tb);
      if (cs.batch_a) sa.insert(sa.begin(), Z);
      if (cs.batch_b) sb.insert(sb.begin(), Z);
      const Tensor A = uniform(sa, DType::F64, seed, 0), B = uniform(sb, DType::F64, seed, 1);
      const double alpha = 0.7;
      const ForwardFn f = [&](const std::vector<Tensor>& in) {
        Shape sc{M, N};
        if (cs.batch_a || cs.batch_b) sc.insert(sc.begin(), Z);
        Tensor C = Tensor::empty(sc, DType::F64);
        matmul_forward(C, in[0], in[1], ta, tb, alpha);
        return std::vector<Tensor>{C};
      };
      const DotLoss L = dot_loss(f, {A, B}, seed + 1);
      Tensor dA = poisoned(sa, DType::F64), dB = poisoned(sb, DType::F64);
      matmul_backward(dA, dB, L.cotangents[0], A, B, ta, tb, alpha);
      const GradcheckResult r = gradcheck(L.loss, {A, B}, {dA, dB});
      EXPECT_LT(r.max_rel_error, 1e-6) << r.str();

      // accumulate_db adds the grad onto what dB holds; dA may be skipped.
      const Tensor dB0 = uniform(sb, DType::F64, seed, 2);
      Tensor acc = dB0.clone(), none;
      matmul_backward(none, acc, L.cotangents[0], A, B, ta, tb, alpha, /*accumulate_db=*/true);
      std::vector<double> want = dB0.to_vector();
      const std::vector<double> d = dB.to_vector();
      for (size_t i = 0; i < want.size(); ++i) want[i] += d[i];
      EXPECT_TRUE(all_close(acc, want, 1e-13, 1e-13));
    }
}

// column_major() is how the CUDA backend hands a product to cuBLASLt. A column-major GEMM
// emulated on its description must compute the row-major product, for every transpose and
// padded leading dimensions; so the mapping is tested without a GPU.
TEST(EngineMatmul, ColumnMajorMappingComputesTheRowMajorProduct) {
  REWY_TEST_SEED(seed);
  const int64_t M = 5, N = 4, K = 3;
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    SCOPED_TRACE(fmt::format("ta={} tb={}", ta, tb));
    const Shape sa = stored(M, K, ta), sb = stored(K, N, tb);
    const Tensor A = uniform({sa[0], sa[1] + 2}, DType::F64, seed, 0).slice(1, 0, sa[1]);  // padded rows
    const Tensor B = uniform({sb[0], sb[1] + 1}, DType::F64, seed, 1).slice(1, 0, sb[1]);
    detail::GemmArgs g;
    g.m = M, g.n = N, g.k = K, g.trans_a = ta, g.trans_b = tb;
    g.lda = A.stride(0), g.ldb = B.stride(0), g.ldc = N + 3;
    const detail::ColumnMajorGemm cm = detail::column_major(g);
    // op(first) is m x k and op(second) k x n; leading dimensions cover the stored rows.
    EXPECT_EQ(cm.trans_first ? cm.cols_first : cm.rows_first, cm.m);
    EXPECT_EQ(cm.trans_first ? cm.rows_first : cm.cols_first, cm.k);
    EXPECT_EQ(cm.trans_second ? cm.cols_second : cm.rows_second, cm.k);
    EXPECT_EQ(cm.trans_second ? cm.rows_second : cm.cols_second, cm.n);
    EXPECT_GE(cm.ld_first, cm.rows_first);
    EXPECT_GE(cm.ld_second, cm.rows_second);
    EXPECT_GE(cm.ldc, cm.m);
    // Column-major: element (i, j) of a stored matrix sits at i + j·ld.
    const double* first = B.data<double>();
    const double* second = A.data<double>();
    const auto op = [](const double* x, int64_t ld, bool trans, int64_t i, int64_t j) {
      return trans ? x[j + i * ld] : x[i + j * ld];
    };
    std::vector<double> D(size_t(cm.ldc * cm.n), NAN);
    for (int64_t i = 0; i < cm.m; ++i)
      for (int64_t j = 0; j < cm.n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < cm.k; ++l)
          sum += op(first, cm.ld_first, cm.trans_first, i, l) * op(second, cm.ld_second, cm.trans_second, l, j);
        D[size_t(i + j * cm.ldc)] = sum;
      }
    // Read D as the row-major C [M, N] with row stride ldc.
    const Ref ref = reference(A, B, ta, tb, 1.0, 0.0, Tensor{});
    for (int64_t r = 0; r < M; ++r)
      for (int64_t c = 0; c < N; ++c)
        EXPECT_NEAR(D[size_t(r * g.ldc + c)], ref.c[size_t(r * N + c)], 1e-14) << r << ", " << c;
  }
}

TEST(EngineMatmul, BadArgumentsNameTheOpAndShapes) {
  const Tensor A = Tensor::full({2, 3}, 1.0, DType::F32), B = Tensor::full({4, 5}, 1.0, DType::F32);
  Tensor C = Tensor::empty({2, 5}, DType::F32);
  std::string e = error_of([&] { matmul_forward(C, A, B); });
  EXPECT_NE(e.find("matmul_forward: shapes do not match: op(A) is [2, 3] (A [2, 3]), op(B) is [4, 5] (B [4, 5]), C "
                   "is [2, 5]"),
            std::string::npos)
      << e;
  const Tensor Bt = Tensor::full({5, 3}, 1.0, DType::F32).transpose(0, 1);  // [3, 5], column-major
  e = error_of([&] { matmul_forward(C, A, Bt); });
  EXPECT_NE(e.find("its last dim needs unit stride"), std::string::npos) << e;
  const Tensor B64 = Tensor::full({3, 5}, 1.0, DType::F64);
  EXPECT_NE(error_of([&] { matmul_forward(C, A, B64); }).find("A is f32[2, 3] cpu but B is f64[3, 5] cpu"),
            std::string::npos);
  Tensor C64 = Tensor::empty({2, 5}, DType::F64);
  const Tensor B32 = Tensor::full({3, 5}, 1.0, DType::F32);
  EXPECT_NE(error_of([&] { matmul_forward(C64, A, B32); }).find("expected f32 for A"), std::string::npos);
  const Tensor A3 = Tensor::full({2, 2, 3}, 1.0, DType::F32), B3 = Tensor::full({3, 3, 5}, 1.0, DType::F32);
  Tensor C3 = Tensor::empty({2, 2, 5}, DType::F32);
  EXPECT_NE(error_of([&] { matmul_forward(C3, A3, B3); }).find("batch sizes differ"), std::string::npos);
}

}  // namespace
