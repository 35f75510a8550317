// The counter-based RNG: Philox4x32-10 known answers (Random123's test vectors), the stream
// layout (element i of a tensor = value i), statistics, and the fills on every dtype.
#include <gtest/gtest.h>

#include "engine/ops/random.h"
#include "engine/rng.h"
#include "test_engine_util.h"

using namespace rewy;
using namespace rewy::test;

namespace {

// Counter words c0..c3 and key words k0, k1 in Random123's order.
rng::U32x4 philox_words(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1) {
  return rng::philox4x32_10(uint64_t(c1) << 32 | c0, uint64_t(c3) << 32 | c2, uint64_t(k1) << 32 | k0);
}

void expect_words(const rng::U32x4& r, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  EXPECT_EQ(r.x[0], a);
  EXPECT_EQ(r.x[1], b);
  EXPECT_EQ(r.x[2], c);
  EXPECT_EQ(r.x[3], d);
}

TEST(EngineRng, Philox4x32_10KnownAnswers) {
  expect_words(philox_words(0, 0, 0, 0, 0, 0), 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u);
  expect_words(philox_words(~0u, ~0u, ~0u, ~0u, ~0u, ~0u), 0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu);
  expect_words(philox_words(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u),
               0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u);
}

TEST(EngineRng, TensorElementIIsStreamValueI) {
  REWY_TEST_SEED(seed);
  Tensor t = Tensor::empty({3, 37}, DType::F64);
  fill_uniform(t, seed, 7, -1.0, 3.0);
  const std::vector<double> v = t.to_vector();
  for (size_t i = 0; i < v.size(); ++i) {
    const double u = rng::uniform(seed, 7, i);
    ASSERT_EQ(v[i], -1.0 + 4.0 * u);  // exact: u has 24 bits, 4u and the sum are exact in f64
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
  // Same arguments, same numbers; another offset or seed, another stream.
  Tensor again = Tensor::empty({111}, DType::F64), other = Tensor::empty({111}, DType::F64);
  fill_uniform(again, seed, 7, -1.0, 3.0);
  EXPECT_EQ(again.to_vector(), v);
  fill_uniform(other, seed, 8, -1.0, 3.0);
  EXPECT_NE(other.to_vector(), v);
  fill_uniform(other, seed + 1, 7, -1.0, 3.0);
  EXPECT_NE(other.to_vector(), v);
}

TEST(EngineRng, DtypesShareTheStream) {
  REWY_TEST_SEED(seed);
  Tensor f = Tensor::empty({500}, DType::F32), h = Tensor::empty({500}, DType::BF16), d = Tensor::empty({500}, DType::F64);
  for (bool normal : {false, true}) {
    SCOPED_TRACE(normal ? "normal" : "uniform");
    for (Tensor* t : {&f, &h, &d}) {
      if (normal) fill_normal(*t, seed, 3, 0.5, 2.0);
      else fill_uniform(*t, seed, 3, -2.0, 5.0);
    }
    const std::vector<double> fv = f.to_vector(), hv = h.to_vector(), dv = d.to_vector();
    for (size_t i = 0; i < fv.size(); ++i) {
      ASSERT_EQ(hv[i], double(round_bf16(float(fv[i]))));  // bf16 is the f32 value rounded once more
      // f32 values are formed in f32 (uniform: one fma) or rounded from f64 (normal): within
      // one f32 rounding of the f64 value.
      ASSERT_NEAR(fv[i], dv[i], 2 * kU32 * std::max(1.0, std::abs(dv[i])));
    }
  }
}

// Sample mean and variance within 6 standard errors (a false alarm about once in 10^8 runs).
TEST(EngineRng, MomentsOfUniformAndNormal) {
  REWY_TEST_SEED(seed);
  const int64_t n = 200000;
  Tensor t = Tensor::empty({n}, DType::F64);
  const auto moments = [&] {
    const std::vector<double> v = t.to_vector();
    double m = 0, m2 = 0, m4 = 0;
    for (double x : v) m += x;
    m /= double(n);
    for (double x : v) m2 += (x - m) * (x - m), m4 += std::pow(x - m, 4);
    struct {
      double mean, var, m4;
    } r{m, m2 / double(n), m4 / double(n)};
    return r;
  };
  fill_uniform(t, seed, 0, -1.0, 3.0);  // mean 1, variance 16/12, 4th central moment 16/5
  auto u = moments();
  EXPECT_NEAR(u.mean, 1.0, 6 * std::sqrt(16.0 / 12 / double(n)));
  EXPECT_NEAR(u.var, 16.0 / 12, 6 * std::sqrt((16.0 / 5 - (16.0 / 12) * (16.0 / 12)) / double(n)));
  fill_normal(t, seed, 1, -2.0, 3.0);  // mean -2, variance 9, 4th central moment 3·81
  auto g = moments();
  EXPECT_NEAR(g.mean, -2.0, 6 * std::sqrt(9.0 / double(n)));
  EXPECT_NEAR(g.var, 9.0, 6 * std::sqrt((3 * 81.0 - 81.0) / double(n)));
  EXPECT_NEAR(g.m4 / (g.var * g.var), 3.0, 0.1);  // kurtosis: the tails are Gaussian, not just the spread
}

TEST(EngineRng, BadArgumentsAreErrors) {
  Tensor t = Tensor::empty({4, 3}, DType::F32);
  Tensor tt = t.transpose(0, 1);
  EXPECT_NE(error_of([&] { fill_uniform(tt, 1, 0); }).find("fill_uniform: t f32[3, 4] cpu is not contiguous"),
            std::string::npos);
  Tensor i = Tensor::empty({3}, DType::I32);
  EXPECT_NE(error_of([&] { fill_normal(i, 1, 0); }).find("expected a floating dtype"), std::string::npos);
  EXPECT_NE(error_of([&] { fill_uniform(t, 1, 0, 2.0, 1.0); }).find("empty range"), std::string::npos);
  EXPECT_NE(error_of([&] { fill_normal(t, 1, 0, 0.0, -1.0); }).find("negative stddev"), std::string::npos);
}

}  // namespace
