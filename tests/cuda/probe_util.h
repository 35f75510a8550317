// Host helpers of the device-probe tests (gpu_test_wgmma, gpu_test_tma).
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "engine/dtype.h"

namespace rewy::test {

// n bf16 bit patterns of N(0, 1) draws.
inline std::vector<uint16_t> random_bf16(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> d;
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = bf16::from_float(d(rng));
  return v;
}

inline double bf16_value(uint16_t bits) { return bf16::to_float(bits); }

// Error bound of a K-term sum of exact bf16 products accumulated in fp32, at result scale `scale`.
inline double fp32_sum_bound(int K, double scale) { return 4.0 * K * 0x1p-24 * scale; }

}  // namespace rewy::test
