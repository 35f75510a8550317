// Host helpers of the device-probe tests (gpu_test_wgmma, gpu_test_tma).
#pragma once
#include <cstddef>
#include <vector>

namespace rewy::test {

// [ra][rb] = A [ra][K] · B [rb][K]ᵀ in f64, times `times`.
inline std::vector<double> product_tn(const std::vector<double>& A, const std::vector<double>& B, int ra, int rb, int K,
                                      double times = 1.0) {
  std::vector<double> out(std::size_t(ra) * rb, 0.0);
  for (int i = 0; i < ra; ++i)
    for (int j = 0; j < rb; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += A[std::size_t(i) * K + k] * B[std::size_t(j) * K + k];
      out[std::size_t(i) * rb + j] = times * s;
    }
  return out;
}

// Error bound of a K-term sum of exact bf16 products accumulated in fp32, at result scale `scale`.
inline double fp32_sum_bound(int K, double scale) { return 4.0 * K * 0x1p-24 * scale; }

}  // namespace rewy::test
