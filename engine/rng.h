// Counter-based RNG (Philox4x32-10): element i of the stream (seed, offset) is a pure function of
// (seed, offset, i), so CPU and GPU produce the same numbers and any slice can be generated
// independently (one process per GPU draws its own slice without coordination).
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "engine/dtype.h"

namespace rewy::rng {

struct U32x4 {
  uint32_t x[4];
};

REWY_HD U32x4 philox4x32_10(uint64_t counter_lo, uint64_t counter_hi, uint64_t key) {
  uint32_t c0 = uint32_t(counter_lo), c1 = uint32_t(counter_lo >> 32);
  uint32_t c2 = uint32_t(counter_hi), c3 = uint32_t(counter_hi >> 32);
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
  constexpr uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  for (int r = 0; r < 10; ++r) {
    const uint64_t p0 = uint64_t(M0) * c0, p1 = uint64_t(M1) * c2;
    const uint32_t h0 = uint32_t(p0 >> 32), l0 = uint32_t(p0), h1 = uint32_t(p1 >> 32), l1 = uint32_t(p1);
    const uint32_t n0 = h1 ^ c1 ^ k0, n2 = h0 ^ c3 ^ k1;
    c0 = n0; c1 = l1; c2 = n2; c3 = l0;
    k0 += W0; k1 += W1;
  }
  return U32x4{{c0, c1, c2, c3}};
}

// 32 random bits, element i of stream (seed, offset).
REWY_HD uint32_t bits(uint64_t seed, uint64_t offset, uint64_t i) {
  return philox4x32_10(i >> 2, offset, seed).x[i & 3];
}

// Uniform in [0, 1) with 24 random bits: exact in float, identical on CPU and GPU.
REWY_HD float uniform(uint64_t seed, uint64_t offset, uint64_t i) {
  return float(bits(seed, offset, i) >> 8) * (1.0f / 16777216.0f);
}

// lo + (hi - lo)·u as one fused multiply-add, so that CPU and GPU round identically (a separate
// multiply and add may be contracted differently by the two compilers).
REWY_HD float uniform_in(uint64_t seed, uint64_t offset, uint64_t i, float lo, float hi) {
  return fmaf(hi - lo, uniform(seed, offset, i), lo);
}
REWY_HD double uniform_in(uint64_t seed, uint64_t offset, uint64_t i, double lo, double hi) {
  return fma(hi - lo, double(uniform(seed, offset, i)), lo);
}

// Standard normal by Box-Muller on the pair (2j, 2j+1) of one Philox block; computed in double so
// CPU and GPU agree to rounding of the final float.
REWY_HD double normal_f64(uint64_t seed, uint64_t offset, uint64_t i) {
  const U32x4 r = philox4x32_10(i >> 1, offset, seed);
  // 53-bit uniforms in (0, 1]: never log(0).
  const uint64_t a = (uint64_t(r.x[0]) << 21) ^ (r.x[1] >> 11);
  const uint64_t b = (uint64_t(r.x[2]) << 21) ^ (r.x[3] >> 11);
  const double u1 = (double(a & ((uint64_t(1) << 53) - 1)) + 1.0) * (1.0 / 9007199254740992.0);
  const double u2 = double(b & ((uint64_t(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
  const double rad = sqrt(-2.0 * log(u1));
  const double ang = 6.283185307179586476925286766559 * u2;
  return (i & 1) ? rad * sin(ang) : rad * cos(ang);
}

// mean + stddev·z, fused for the same reason as uniform_in.
REWY_HD double normal_in(uint64_t seed, uint64_t offset, uint64_t i, double mean, double stddev) {
  return fma(stddev, normal_f64(seed, offset, i), mean);
}

// Value i as an element of a T tensor (f32, bf16, f64): uniform values are formed in f64 for
// f64, else in f32 (rounded once more for bf16); normal values in f64, then rounded.
template <typename T> REWY_HD T uniform_as(uint64_t seed, uint64_t offset, uint64_t i, double lo, double hi) {
  if constexpr (std::is_same_v<T, double>) return uniform_in(seed, offset, i, lo, hi);
  else return T(uniform_in(seed, offset, i, float(lo), float(hi)));
}
template <typename T> REWY_HD T normal_as(uint64_t seed, uint64_t offset, uint64_t i, double mean, double stddev) {
  const double v = normal_in(seed, offset, i, mean, stddev);
  if constexpr (std::is_same_v<T, double>) return v;
  else return T(float(v));
}

}  // namespace rewy::rng
