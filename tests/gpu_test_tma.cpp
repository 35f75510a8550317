// TMA (kernels/delta/cuda/tma.cuh) as the part-2 kernels will use it: a 64-token × 128-channel tile
// of one head of a token-major [rows][H][128] bf16 tensor lands in wgmma.cuh's swizzled layout,
// rows past the end arrive as zeros, and two such tiles feed a warpgroup product Q·Kᵀ.
#include <algorithm>
#include <vector>

#include "tests/cuda/probe_util.h"
#include "tests/test_engine_util.h"

#if REWY_WITH_CUDA
#include "tests/cuda/tma_probe.h"
#endif

using namespace rewy;
using namespace rewy::test;

namespace {

// Rows t0..t0+63 of head h of X [rows][H][128] (values, zeros past the end): [64][128].
std::vector<double> token_tile(const std::vector<double>& X, int64_t rows, int64_t H, int h, int t0) {
  std::vector<double> tile(64 * 128, 0.0);
  for (int r = 0; r < 64 && t0 + r < rows; ++r)
    std::copy_n(&X[(size_t(t0 + r) * H + h) * 128], 128, &tile[size_t(r) * 128]);
  return tile;
}

}  // namespace

class GpuTma : public GpuStreamTest {};

TEST_F(GpuTma, TilesLandSwizzledAndZeroFilled) {
#if REWY_WITH_CUDA
  REWY_TEST_SEED(seed);
  const int64_t rows = 200, H = 3;
  const Tensor X = uniform({rows, H, 128}, DType::BF16, seed, 0), Xg = gpu(X);
  const std::vector<double> x = X.to_vector();
  for (int h : {0, 2})
    for (int t0 : {0, 64, 136, 190}) {  // 136, 190: the tile runs past the end
      SCOPED_TRACE(::testing::Message() << "head " << h << ", tokens from " << t0);
      Tensor tile = nan({64, 128}, DType::BF16);
      tma_tile(Xg, h, t0, tile, s());
      EXPECT_TRUE(all_close(host(tile), token_tile(x, rows, H, h, t0), 0.0, 0.0));  // bit-exact copies
    }
#endif
}

TEST_F(GpuTma, TmaTilesFeedAWarpgroupProduct) {
#if REWY_WITH_CUDA
  REWY_TEST_SEED(seed);
  const int64_t rows = 150, H = 2;
  const int h = 1;
  const Tensor Q = uniform({rows, H, 128}, DType::BF16, seed, 0), K = uniform({rows, H, 128}, DType::BF16, seed, 1);
  const std::vector<double> q = Q.to_vector(), k = K.to_vector();
  for (int t0 : {0, 128}) {
    SCOPED_TRACE(::testing::Message() << "tokens from " << t0);
    Tensor P = nan({64, 64}, DType::F32);
    tma_qk(gpu(Q), gpu(K), h, t0, P, s());
    const std::vector<double> ref =
        product_tn(token_tile(q, rows, H, h, t0), token_tile(k, rows, H, h, t0), 64, 64, 128);
    EXPECT_TRUE(all_close(host(P), ref, 0.0, fp32_sum_bound(128, max_abs(ref))));
  }
#endif
}
