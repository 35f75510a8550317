// TMA (kernels/delta/cuda/tma.cuh) as the part-2 kernels will use it: a 64-token × 128-channel tile
// of one head of a token-major [rows][H][128] bf16 tensor lands in wgmma.cuh's swizzled layout,
// rows past the end arrive as zeros, and two such tiles feed a warpgroup product Q·Kᵀ.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/device.h"
#include "tests/cuda/probe_util.h"

#if REWY_WITH_CUDA
#include "tests/cuda/tma_probe.h"
#endif

using namespace rewy;

using test::bf16_value;
using test::fp32_sum_bound;
using test::random_bf16;

TEST(GpuTma, TilesLandSwizzledAndZeroFilled) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
#if REWY_WITH_CUDA
  std::mt19937 rng(std::random_device{}());
  const int64_t rows = 200, H = 3;
  const std::vector<uint16_t> X = random_bf16(size_t(rows * H * 128), rng);
  for (int h : {0, 2})
    for (int t0 : {0, 64, 136, 190}) {  // 136, 190: the tile runs past the end
      SCOPED_TRACE(::testing::Message() << "head " << h << ", tokens from " << t0);
      const std::vector<uint16_t> tile = test::tma_tile(X, rows, H, h, t0);
      for (int r = 0; r < 64; ++r)
        for (int c = 0; c < 128; ++c) {
          const uint16_t want = t0 + r < rows ? X[(size_t(t0 + r) * H + h) * 128 + c] : 0;
          ASSERT_EQ(tile[size_t(r) * 128 + c], want) << "row " << r << " channel " << c;
        }
    }
#endif
}

TEST(GpuTma, TmaTilesFeedAWarpgroupProduct) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
#if REWY_WITH_CUDA
  std::mt19937 rng(std::random_device{}());
  const int64_t rows = 150, H = 2;
  const std::vector<uint16_t> Q = random_bf16(size_t(rows * H * 128), rng), K = random_bf16(Q.size(), rng);
  for (int t0 : {0, 128}) {
    SCOPED_TRACE(::testing::Message() << "tokens from " << t0);
    const int h = 1;
    const std::vector<float> P = test::tma_qk(Q, K, rows, H, h, t0);
    double worst = 0, scale = 0;
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j) {
        double ref = 0;
        if (t0 + i < rows && t0 + j < rows)
          for (int c = 0; c < 128; ++c)
            ref += bf16_value(Q[(size_t(t0 + i) * H + h) * 128 + c]) *
                   bf16_value(K[(size_t(t0 + j) * H + h) * 128 + c]);
        const double got = P[size_t(i) * 64 + j];
        ASSERT_TRUE(std::isfinite(got)) << "P[" << i << "][" << j << "] not written";
        worst = std::max(worst, std::abs(got - ref));
        scale = std::max(scale, std::abs(ref));
      }
    EXPECT_LE(worst, fp32_sum_bound(128, scale)) << "worst abs error " << worst << " at scale " << scale;
  }
#endif
}
