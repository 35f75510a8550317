// The wgmma building block of the part-2 kernels (kernels/delta/cuda/wgmma.cuh): one warpgroup's
// A·Bᵀ on 128-byte-swizzled K- or MN-major shared-memory tiles, against a CPU product of the same
// bf16 values. Descriptor or layout mistakes give wrong numbers, not errors, so every width the
// kernels use is checked, with overwrite and accumulate, on a NaN-poisoned output.
#include "tests/cuda/probe_util.h"
#include "tests/test_engine_util.h"

#if REWY_WITH_CUDA
#include "tests/cuda/wgmma_probe.h"
#endif

using namespace rewy;
using namespace rewy::test;

class GpuWgmma : public GpuStreamTest {};

// Every operand layout the kernels may use: A and B each K-major or MN-major (transposed tiles).
TEST_F(GpuWgmma, SwizzledProductsMatchTheCpu) {
#if REWY_WITH_CUDA
  REWY_TEST_SEED(seed);
  uint64_t offset = 0;
  for (int layout = 0; layout < 4; ++layout)
    for (int K : {64, 128})
      for (int N : {16, 32, 64, 128})
        for (bool twice : {false, true}) {
          const bool a_mn = layout & 1, b_mn = layout & 2;
          if (b_mn && N < 64) continue;  // an MN-major B spans whole 128-byte swizzle rows
          SCOPED_TRACE(::testing::Message() << "N=" << N << " K=" << K << " A " << (a_mn ? "MN" : "K") << "-major, B "
                                            << (b_mn ? "MN" : "K") << "-major" << (twice ? ", accumulate" : ""));
          const Tensor A = uniform({64, K}, DType::BF16, seed, offset++), B = uniform({N, K}, DType::BF16, seed, offset++);
          Tensor D = nan({64, N}, DType::F32);
          wgmma(gpu(A), gpu(B), D, a_mn, b_mn, twice, s());
          const std::vector<double> ref = product_tn(A.to_vector(), B.to_vector(), 64, N, K, twice ? 2.0 : 1.0);
          EXPECT_TRUE(all_close(host(D), ref, 0.0, fp32_sum_bound(K, max_abs(ref))));
        }
#endif
}
