// The wgmma building block of the part-2 kernels (kernels/delta/cuda/wgmma.cuh): one warpgroup's
// A·Bᵀ on 128-byte-swizzled K- or MN-major shared-memory tiles, against a CPU product of the same bf16
// values. Descriptor or layout mistakes give wrong numbers, not errors, so every width the kernels
// use is checked, with overwrite and accumulate.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/device.h"
#include "tests/cuda/probe_util.h"

#if REWY_WITH_CUDA
#include "tests/cuda/wgmma_probe.h"
#endif

using namespace rewy;

using test::bf16_value;
using test::fp32_sum_bound;
using test::random_bf16;

// Every operand layout the kernels may use: A and B each K-major or MN-major (transposed tiles).
TEST(GpuWgmma, SwizzledProductsMatchTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
#if REWY_WITH_CUDA
  std::mt19937 rng(std::random_device{}());
  for (int layout = 0; layout < 4; ++layout)
    for (int K : {64, 128})
      for (int N : {16, 32, 64, 128})
        for (bool twice : {false, true}) {
          const bool a_mn = layout & 1, b_mn = layout & 2;
          if (b_mn && N < 64) continue;  // an MN-major B spans whole 128-byte swizzle rows
          SCOPED_TRACE(::testing::Message() << "N=" << N << " K=" << K << " A " << (a_mn ? "MN" : "K") << "-major, B "
                                            << (b_mn ? "MN" : "K") << "-major" << (twice ? ", accumulate" : ""));
          const std::vector<uint16_t> A = random_bf16(size_t(64) * K, rng), B = random_bf16(size_t(N) * K, rng);
          const std::vector<float> D = test::wgmma(N, K, a_mn, b_mn, A, B, twice);
          double worst = 0, scale = 0;
          for (int r = 0; r < 64; ++r)
            for (int c = 0; c < N; ++c) {
              double ref = 0;
              for (int k = 0; k < K; ++k)
                ref += bf16_value(A[size_t(r) * K + k]) * bf16_value(B[size_t(c) * K + k]);
              if (twice) ref *= 2;
              const double got = D[size_t(r) * N + c];
              ASSERT_TRUE(std::isfinite(got)) << "D[" << r << "][" << c << "] not written";
              worst = std::max(worst, std::abs(got - ref));
              scale = std::max(scale, std::abs(ref));
            }
          // Exact bf16 products summed in fp32: K roundings of at most 2^-24 of the running sum.
          EXPECT_LE(worst, fp32_sum_bound(K, scale)) << "worst abs error " << worst << " at scale " << scale;
        }
#endif
}
