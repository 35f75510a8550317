// cuBLASLt matmul against the CPU twin and an f64 reference. The rule (flash-attention's): the
// GPU's max error against the f64 product of the same inputs is at most twice the CPU's (which
// computes bf16 products in f32 from the same bf16 inputs), or within the worst-case f32
// accumulation bound (K+2)·u32·Σ|a||b| where both are tiny. Skipped without a device.
#include <gtest/gtest.h>

#include "engine/ops/matmul.h"
#include "test_engine_util.h"

using namespace rewy;
using namespace rewy::test;

namespace {

// f64 reference of C = alpha·op(A)·op(B) for 2-D or batched (shared operands broadcast) and the
// largest Σ_k |alpha·a·b|.
struct Ref {
  std::vector<double> c;
  double max_scale = 0;
};
Ref reference(const Tensor& A, const Tensor& B, bool ta, bool tb, double alpha) {
  const Tensor A64 = A.to(DType::F64).contiguous(), B64 = B.to(DType::F64).contiguous();
  const std::vector<double> a = A64.to_vector(), b = B64.to_vector();
  const int64_t ar = A.size(-2), ac = A.size(-1), br = B.size(-2), bc = B.size(-1);
  const int64_t M = ta ? ac : ar, K = ta ? ar : ac, N = tb ? br : bc;
  const int64_t batch = std::max(A.dim() == 3 ? A.size(0) : 1, B.dim() == 3 ? B.size(0) : 1);
  Ref r;
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        const double* az = a.data() + (A.dim() == 3 ? z * ar * ac : 0);
        const double* bz = b.data() + (B.dim() == 3 ? z * br * bc : 0);
        double sum = 0, scale = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double p = (ta ? az[k * ac + i] : az[i * ac + k]) * (tb ? bz[j * bc + k] : bz[k * bc + j]);
          sum += p, scale += std::abs(p);
        }
        r.c.push_back(alpha * sum);
        r.max_scale = std::max(r.max_scale, std::abs(alpha) * scale);
      }
  return r;
}

double max_err(const std::vector<double>& x, const std::vector<double>& ref) {
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::isnan(x[i]) ? INFINITY : std::abs(x[i] - ref[i]));
  return m;
}

::testing::AssertionResult within_twice_cpu(const std::vector<double>& gpu, const std::vector<double>& cpu,
                                            const Ref& ref, int64_t K) {
  const double e_gpu = max_err(gpu, ref.c), e_cpu = max_err(cpu, ref.c);
  const double floor = double(K + 2) * kU32 * ref.max_scale;
  if (e_gpu <= std::max(2 * e_cpu, floor)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "GPU error " << e_gpu << " > max(2 x CPU error " << e_cpu << ", " << floor
                                       << ")";
}

Shape stored(int64_t r, int64_t c, bool t) { return t ? Shape{c, r} : Shape{r, c}; }

class GpuMatmul : public ::testing::Test {
 protected:
  void SetUp() override {
    REWY_REQUIRE_CUDA();
    stream_ = std::make_unique<OwnedStream>(cuda(0));
  }
  const Stream& s() const { return stream_->get(); }
  Tensor gpu(const Tensor& x) const { return on(x, cuda(0), s()); }
  std::vector<double> host(const Tensor& t) const { return on(t, cpu(), s()).to_vector(); }
  std::unique_ptr<OwnedStream> stream_;
};

struct Types {
  DType ab, c;
};
const Types kTypes[] = {{DType::BF16, DType::BF16}, {DType::BF16, DType::F32}, {DType::F32, DType::F32}};

TEST_F(GpuMatmul, ShapesTransposesAndTypesMatchCpu) {
  REWY_TEST_SEED(seed);
  const int64_t shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {128, 96, 160}, {3, 250, 7}, {64, 1, 512}};
  for (const auto& sh : shapes)
    for (const Types& ty : kTypes)
      for (int t = 0; t < 4; ++t) {
        const bool ta = t & 1, tb = t & 2;
        const int64_t M = sh[0], N = sh[1], K = sh[2];
        SCOPED_TRACE(fmt::format("{}x{}x{} ta={} tb={} {}->{}", M, N, K, ta, tb, dtype_name(ty.ab), dtype_name(ty.c)));
        const Tensor A = uniform(stored(M, K, ta), ty.ab, seed, 0), B = uniform(stored(K, N, tb), ty.ab, seed, 1);
        Tensor C = Tensor::empty({M, N}, ty.c), Cg = poisoned({M, N}, ty.c, cuda(0), &s());
        matmul_forward(C, A, B, ta, tb, 0.5);
        matmul_forward(Cg, gpu(A), gpu(B), ta, tb, 0.5, 0.0, &s());
        EXPECT_TRUE(within_twice_cpu(host(Cg), C.to_vector(), reference(A, B, ta, tb, 0.5), K));
      }
}

TEST_F(GpuMatmul, BetaAccumulatesLikeCpu) {
  REWY_TEST_SEED(seed);
  for (const Types& ty : kTypes) {
    SCOPED_TRACE(fmt::format("{}->{}", dtype_name(ty.ab), dtype_name(ty.c)));
    const Tensor A = uniform({40, 24}, ty.ab, seed, 0), B = uniform({24, 56}, ty.ab, seed, 1);
    const Tensor C0 = uniform({40, 56}, ty.c, seed, 2);
    Tensor C = C0.clone(), Cg = gpu(C0);
    matmul_forward(C, A, B, false, false, 1.0, 1.0);
    matmul_forward(Cg, gpu(A), gpu(B), false, false, 1.0, 1.0, &s());
    Ref ref = reference(A, B, false, false, 1.0);
    const std::vector<double> c0 = C0.to_vector();
    for (size_t i = 0; i < c0.size(); ++i) ref.c[i] += c0[i];
    ref.max_scale += 2;  // |c0| < 2
    EXPECT_TRUE(within_twice_cpu(host(Cg), C.to_vector(), ref, 24));
  }
}

TEST_F(GpuMatmul, BatchedSharedAndPaddedMatchCpu) {
  REWY_TEST_SEED(seed);
  const int64_t Z = 4, M = 33, N = 20, K = 48;
  for (const Types& ty : kTypes)
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      SCOPED_TRACE(fmt::format("ta={} tb={} {}->{}", ta, tb, dtype_name(ty.ab), dtype_name(ty.c)));
      Shape sa = stored(M, K, ta), sb = stored(K, N, tb);
      const Tensor A2 = uniform(sa, ty.ab, seed, 0), B2 = uniform(sb, ty.ab, seed, 1);
      sa.insert(sa.begin(), Z);
      sb.insert(sb.begin(), Z);
      Shape wide = sa;
      wide.back() += 5;  // padded rows: an unaligned, strided view
      const Tensor A3 = uniform(wide, ty.ab, seed, 2).slice(2, 3, 3 + sa.back()), B3 = uniform(sb, ty.ab, seed, 3);
      const std::pair<Tensor, Tensor> pairs[] = {{A3, B3}, {A3, B2}, {A2, B3}, {A3.contiguous(), B2}};
      for (const auto& [A, B] : pairs) {
        Tensor C = Tensor::empty({Z, M, N}, ty.c), Cg = poisoned({Z, M, N}, ty.c, cuda(0), &s());
        matmul_forward(C, A, B, ta, tb);
        matmul_forward(Cg, gpu(A), gpu(B), ta, tb, 1.0, 0.0, &s());
        EXPECT_TRUE(within_twice_cpu(host(Cg), C.to_vector(), reference(A, B, ta, tb, 1.0), K));
      }
    }
}

TEST_F(GpuMatmul, BackwardMatchesCpu) {
  REWY_TEST_SEED(seed);
  const int64_t Z = 3, M = 40, N = 24, K = 56;
  for (DType dt : {DType::BF16, DType::F32})
    for (bool shared_b : {false, true})
      for (int t = 0; t < 4; ++t) {
        const bool ta = t & 1, tb = t & 2;
        SCOPED_TRACE(fmt::format("{} shared B={} ta={} tb={}", dtype_name(dt), shared_b, ta, tb));
        Shape sa = stored(M, K, ta), sb = stored(K, N, tb);
        sa.insert(sa.begin(), Z);
        if (!shared_b) sb.insert(sb.begin(), Z);
        const Tensor A = uniform(sa, dt, seed, 0), B = uniform(sb, dt, seed, 1), dC = uniform({Z, M, N}, dt, seed, 2);
        // A weight's grad in f32 (bf16 in, f32 out), accumulated onto what it holds.
        const Tensor dB0 = uniform(sb, DType::F32, seed, 3);
        Tensor dA = Tensor::empty(sa, dt), dB = dB0.clone();
        matmul_backward(dA, dB, dC, A, B, ta, tb, 1.0, /*accumulate_db=*/true);
        Tensor dAg = poisoned(sa, dt, cuda(0), &s()), dBg = gpu(dB0);
        matmul_backward(dAg, dBg, gpu(dC), gpu(A), gpu(B), ta, tb, 1.0, true, &s());
        // dA = dC·op(B)ᵀ (N terms) and dB = op(A)ᵀ·dC (Z·M terms when shared): compare with the
        // same rule through the forward products they are.
        const Ref ra = ta ? reference(B, dC, tb, true, 1.0) : reference(dC, B, false, !tb, 1.0);
        EXPECT_TRUE(within_twice_cpu(host(dAg), dA.to_vector(), ra, N));
        // dB: the CPU result itself is the reference here, the bound the accumulation bound.
        const std::vector<double> dbv = dB.to_vector();
        const double terms = double(shared_b ? Z * M : M) + 2;
        EXPECT_TRUE(all_close(host(dBg), dbv, 0.0, 2 * terms * kU32 * (4.0 * terms + 2)));
      }
}

TEST_F(GpuMatmul, StreamsHaveTheirOwnWorkspaces) {
  REWY_TEST_SEED(seed);
  OwnedStream s2(cuda(0));
  const Tensor A = uniform({256, 512}, DType::BF16, seed, 0), B = uniform({512, 384}, DType::BF16, seed, 1);
  const Tensor Ag = gpu(A), Bg = gpu(B);
  const Tensor A2 = on(A, cuda(0), s2), B2 = on(B, cuda(0), s2);
  Tensor C1 = poisoned({256, 384}, DType::F32, cuda(0), &s()), C2 = poisoned({256, 384}, DType::F32, cuda(0), &s2.get());
  for (int i = 0; i < 4; ++i) {  // interleaved on two streams: results must not depend on each other
    matmul_forward(C1, Ag, Bg, false, false, 1.0, 0.0, &s());
    matmul_forward(C2, A2, B2, false, false, 1.0, 0.0, &s2.get());
  }
  EXPECT_EQ(host(C1), on(C2, cpu(), s2).to_vector());
}

TEST_F(GpuMatmul, F64IsAClearError) {
  const Tensor A = gpu(Tensor::full({2, 2}, 1.0, DType::F64));
  Tensor C = poisoned({2, 2}, DType::F64, cuda(0), &s());
  EXPECT_NE(error_of([&] { matmul_forward(C, A, A, false, false, 1.0, 0.0, &s()); }).find("f64 is not supported"),
            std::string::npos);
}

}  // namespace
