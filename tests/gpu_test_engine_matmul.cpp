// cuBLASLt matmul against the CPU twin. The rule (flash-attention's): operands are drawn in f64
// and rounded to the dtype under test; against the f64 product of the unrounded operands, the
// GPU's max error is at most twice that of the CPU twin computing from the same rounded
// operands (or within the f32 accumulation bound (K+2)·u32·Σ|a·b| where both are tiny). The
// rounding of the operands dominates both errors, so the rule holds however each side orders
// its sums. f64 (and layouts cuBLASLt has no algorithm for) run a plain kernel, held to the
// same rule. Skipped without a device.
#include <gtest/gtest.h>

#include "engine/ops/matmul.h"
#include "test_engine_util.h"

using namespace rewy;
using namespace rewy::test;

namespace {

// An operand drawn in f64 (hi) and the same values rounded to the dtype under test (lo).
struct Operand {
  Tensor hi, lo;
};
Operand operand(const Shape& shape, DType dt, uint64_t seed, uint64_t offset) {
  const Tensor hi = uniform(shape, DType::F64, seed, offset);
  Tensor lo = Tensor::empty(shape, dt);  // its own storage even for f64
  lo.copy_from(hi);
  return {hi, lo};
}

// f64 C = alpha·op(A)·op(B) (+ C0) for 2-D or batched operands (a 2-D one shared), or with
// sum_batches the sum over the batch of the products (a shared operand's grad); and the
// largest Σ |alpha·a·b| (+ |c0|) over the terms of an element.
struct Ref {
  std::vector<double> c;
  double max_scale = 0;
};
Ref reference(const Tensor& A, const Tensor& B, bool ta, bool tb, double alpha, const Tensor& C0 = {},
              bool sum_batches = false) {
  const std::vector<double> a = A.to_vector(), b = B.to_vector();
  const std::vector<double> c0 = C0.defined() ? C0.to_vector() : std::vector<double>();
  const int64_t ar = A.size(-2), ac = A.size(-1), br = B.size(-2), bc = B.size(-1);
  const int64_t M = ta ? ac : ar, K = ta ? ar : ac, N = tb ? br : bc;
  const int64_t batch = std::max(A.dim() == 3 ? A.size(0) : 1, B.dim() == 3 ? B.size(0) : 1);
  Ref r;
  const int64_t outs = sum_batches ? 1 : batch;
  r.c.assign(size_t(outs * M * N), 0.0);
  std::vector<double> scale(r.c.size(), 0.0);
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        const double* az = a.data() + (A.dim() == 3 ? z * ar * ac : 0);
        const double* bz = b.data() + (B.dim() == 3 ? z * br * bc : 0);
        const size_t o = size_t(((sum_batches ? 0 : z) * M + i) * N + j);
        for (int64_t k = 0; k < K; ++k) {
          const double p = (ta ? az[k * ac + i] : az[i * ac + k]) * (tb ? bz[j * bc + k] : bz[k * bc + j]);
          r.c[o] += alpha * p, scale[o] += std::abs(alpha * p);
        }
      }
  for (size_t o = 0; o < r.c.size(); ++o) {
    const double prev = c0.empty() ? 0.0 : c0[o];
    r.c[o] += prev;
    r.max_scale = std::max(r.max_scale, scale[o] + std::abs(prev));
  }
  return r;
}

double max_err(const std::vector<double>& x, const std::vector<double>& ref) {
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::isnan(x[i]) ? INFINITY : std::abs(x[i] - ref[i]));
  return m;
}

// `terms` is the number of products summed per element; ab and c the dtypes under test.
::testing::AssertionResult within_twice_cpu(const std::vector<double>& gpu, const std::vector<double>& cpu,
                                            const Ref& ref, int64_t terms, DType ab, DType c) {
  const double e_gpu = max_err(gpu, ref.c), e_cpu = max_err(cpu, ref.c);
  // The CPU twin itself: each product of rounded operands is within 2·u_ab (relative) of the
  // exact one, the f32 sum adds (terms+2)·u32, a bf16 output one rounding of the result. A
  // reference that misses this bound is wrong, and would make the comparison vacuous.
  const double u_acc = ab == DType::F64 ? unit_roundoff(DType::F64) : kU32;
  const double bound = (2 * unit_roundoff(ab) + double(terms + 2) * u_acc) * ref.max_scale +
                       (c == DType::BF16 ? unit_roundoff(c) * max_abs(ref.c) : 0.0);
  if (!(e_cpu <= bound))
    return ::testing::AssertionFailure() << "CPU error " << e_cpu << " beyond its bound " << bound;
  const double floor = double(terms + 2) * u_acc * ref.max_scale;
  if (e_gpu <= std::max(2 * e_cpu, floor)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "GPU error " << e_gpu << " > max(2 x CPU error " << e_cpu << ", " << floor
                                       << ")";
}

using GpuMatmul = GpuStreamTest;

struct Types {
  DType ab, c;
};
const Types kTypes[] = {
    {DType::BF16, DType::BF16}, {DType::BF16, DType::F32}, {DType::F32, DType::F32}, {DType::F64, DType::F64}};

TEST_F(GpuMatmul, ShapesTransposesAndTypesMatchCpu) {
  REWY_TEST_SEED(seed);
  const int64_t shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {128, 96, 160}, {3, 250, 7}, {64, 1, 512}};  // M, N, K
  for (const auto& sh : shapes)
    for (const Types& ty : kTypes)
      for (int t = 0; t < 4; ++t) {
        const bool ta = t & 1, tb = t & 2;
        const int64_t M = sh[0], N = sh[1], K = sh[2];
        SCOPED_TRACE(fmt::format("{}x{}x{} ta={} tb={} {}->{}", M, N, K, ta, tb, dtype_name(ty.ab), dtype_name(ty.c)));
        const Operand A = operand(stored(M, K, ta), ty.ab, seed, 0), B = operand(stored(K, N, tb), ty.ab, seed, 1);
        Tensor C = Tensor::empty({M, N}, ty.c), Cg = poisoned({M, N}, ty.c, cuda(0), &s());
        matmul_forward(C, A.lo, B.lo, ta, tb, 0.5);
        matmul_forward(Cg, gpu(A.lo), gpu(B.lo), ta, tb, 0.5, 0.0, &s());
        EXPECT_TRUE(within_twice_cpu(host(Cg), C.to_vector(), reference(A.hi, B.hi, ta, tb, 0.5), K, ty.ab, ty.c));
      }
}

TEST_F(GpuMatmul, BetaAccumulatesLikeCpu) {
  REWY_TEST_SEED(seed);
  for (const Types& ty : kTypes) {
    SCOPED_TRACE(fmt::format("{}->{}", dtype_name(ty.ab), dtype_name(ty.c)));
    const Operand A = operand({40, 24}, ty.ab, seed, 0), B = operand({24, 56}, ty.ab, seed, 1);
    const Operand C0 = operand({40, 56}, ty.c, seed, 2);
    Tensor C = C0.lo.clone(), Cg = gpu(C0.lo);
    matmul_forward(C, A.lo, B.lo, false, false, 1.0, 1.0);
    matmul_forward(Cg, gpu(A.lo), gpu(B.lo), false, false, 1.0, 1.0, &s());
    const Ref ref = reference(A.hi, B.hi, false, false, 1.0, C0.hi);
    EXPECT_TRUE(within_twice_cpu(host(Cg), C.to_vector(), ref, 24, ty.ab, ty.c));
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
      const Operand A2 = operand(sa, ty.ab, seed, 0), B2 = operand(sb, ty.ab, seed, 1);
      sa.insert(sa.begin(), Z);
      sb.insert(sb.begin(), Z);
      Shape wide = sa;
      wide.back() += 5;  // padded rows: an unaligned, strided view
      const Operand Aw = operand(wide, ty.ab, seed, 2);
      const Operand A3{Aw.hi.slice(2, 3, 3 + sa.back()), Aw.lo.slice(2, 3, 3 + sa.back())};
      const Operand B3 = operand(sb, ty.ab, seed, 3);
      const Operand A3c{A3.hi.contiguous(), A3.lo.contiguous()};  // foldable into one tall product
      const std::pair<Operand, Operand> pairs[] = {{A3, B3}, {A3, B2}, {A2, B3}, {A3c, B2}};
      for (const auto& [A, B] : pairs) {
        Tensor C = Tensor::empty({Z, M, N}, ty.c), Cg = poisoned({Z, M, N}, ty.c, cuda(0), &s());
        matmul_forward(C, A.lo, B.lo, ta, tb);
        matmul_forward(Cg, gpu(A.lo), gpu(B.lo), ta, tb, 1.0, 0.0, &s());
        EXPECT_TRUE(within_twice_cpu(host(Cg), C.to_vector(), reference(A.hi, B.hi, ta, tb, 1.0), K, ty.ab, ty.c));
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
        const Operand A = operand(sa, dt, seed, 0), B = operand(sb, dt, seed, 1), dC = operand({Z, M, N}, dt, seed, 2);
        // A weight's grad in f32 (bf16 in, f32 out), accumulated onto what it holds.
        const Operand dB0 = operand(sb, DType::F32, seed, 3);
        Tensor dA = Tensor::empty(sa, dt), dB = dB0.lo.clone();
        matmul_backward(dA, dB, dC.lo, A.lo, B.lo, ta, tb, 1.0, /*accumulate_db=*/true);
        Tensor dAg = poisoned(sa, dt, cuda(0), &s()), dBg = gpu(dB0.lo);
        matmul_backward(dAg, dBg, gpu(dC.lo), gpu(A.lo), gpu(B.lo), ta, tb, 1.0, true, &s());
        // dA = dC·op(B)ᵀ over N terms (stored transposed if ta); dB = op(A)ᵀ·dC (+ dB0) over M
        // terms per batch, summed over the batch when B is shared.
        const Ref ra = ta ? reference(B.hi, dC.hi, tb, true, 1.0) : reference(dC.hi, B.hi, false, !tb, 1.0);
        EXPECT_TRUE(within_twice_cpu(host(dAg), dA.to_vector(), ra, N, dt, dt));
        const Ref rb = tb ? reference(dC.hi, A.hi, true, ta, 1.0, dB0.hi, shared_b)
                          : reference(A.hi, dC.hi, !ta, false, 1.0, dB0.hi, shared_b);
        EXPECT_TRUE(within_twice_cpu(host(dBg), dB.to_vector(), rb, shared_b ? Z * M : M, dt, DType::F32));
      }
}

TEST_F(GpuMatmul, StreamsHaveTheirOwnWorkspaces) {
  REWY_TEST_SEED(seed);
  OwnedStream s2(cuda(0));
  const Tensor A = uniform({256, 512}, DType::BF16, seed, 0), B = uniform({512, 384}, DType::BF16, seed, 1);
  const Tensor Ag = gpu(A), Bg = gpu(B);
  const Tensor A2 = on(A, cuda(0), s2), B2 = on(B, cuda(0), s2);
  Tensor C1 = poisoned({256, 384}, DType::F32, cuda(0), &s());
  Tensor C2 = poisoned({256, 384}, DType::F32, cuda(0), &s2.get());
  for (int i = 0; i < 4; ++i) {  // interleaved on two streams: neither may disturb the other
    matmul_forward(C1, Ag, Bg, false, false, 1.0, 0.0, &s());
    matmul_forward(C2, A2, B2, false, false, 1.0, 0.0, &s2.get());
  }
  EXPECT_EQ(host(C1), on(C2, cpu(), s2).to_vector());  // same problem, same algorithm: same bits
}

}  // namespace
