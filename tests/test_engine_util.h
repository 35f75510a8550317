// Helpers for the engine tests: fresh seeds, random and poisoned tensors, closeness checks.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/copy.h"
#include "engine/ops/random.h"
#include "engine/tensor.h"

namespace rewy::test {

// A fresh seed per test; REWY_TEST_SEED=<n> replays a failure.
inline uint64_t fresh_seed() {
  if (const char* e = std::getenv("REWY_TEST_SEED")) return std::strtoull(e, nullptr, 10);
  static std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

// Declares `const uint64_t var`, a fresh seed that every failure in the scope reports.
#define REWY_TEST_SEED(var)                        \
  const uint64_t var = ::rewy::test::fresh_seed(); \
  SCOPED_TRACE(::testing::Message() << "seed " << var << " (replay: REWY_TEST_SEED=" << var << ")")

// GPU tests run only where a device is visible (never on CI's machine).
#define REWY_REQUIRE_CUDA() \
  if (!::rewy::cuda_available()) GTEST_SKIP() << "no CUDA device"

// Stored shape of a matmul operand whose op() is [r, c] (transposed when t).
inline Shape stored(int64_t r, int64_t c, bool t) { return t ? Shape{c, r} : Shape{r, c}; }

// Half an ulp at 1: the relative error of one rounding to the dtype.
inline double unit_roundoff(DType t) {
  switch (t) {
    case DType::F64: return std::ldexp(1.0, -53);
    case DType::F32: return std::ldexp(1.0, -24);
    case DType::BF16: return std::ldexp(1.0, -8);
    default: return 0.0;
  }
}
constexpr double kU32 = 5.9604644775390625e-08;  // 2^-24

// Uniform in [lo, hi) from stream (seed, offset), rounded to dt, on device d.
inline Tensor uniform(const Shape& shape, DType dt, uint64_t seed, uint64_t offset, double lo = -2.0,
                      double hi = 2.0, Device d = cpu()) {
  Tensor t = Tensor::empty(shape, dt, d);
  fill_uniform(t, seed, offset, lo, hi);
  return t;
}

// x on device d, copied and ordered on stream s (pass the stream the ops run on, so that the
// copy, the ops and the read-back are ordered without further synchronisation).
inline Tensor on(const Tensor& x, Device d, const Stream& s) { return x.to(d, &s); }

// NaN everywhere: an element an op forgot to write shows up in every comparison.
inline Tensor poisoned(const Shape& shape, DType dt, Device d = cpu(), const Stream* s = nullptr) {
  return Tensor::full(shape, std::numeric_limits<double>::quiet_NaN(), dt, d, s);
}

// A GPU test on its own stream of device 0; skipped without a device.
class GpuStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REWY_REQUIRE_CUDA();
    stream_ = std::make_unique<OwnedStream>(cuda(0));
  }
  const Stream& s() const { return stream_->get(); }
  Tensor gpu(const Tensor& x) const { return on(x, cuda(0), s()); }
  Tensor nan(const Shape& shape, DType dt) const { return poisoned(shape, dt, cuda(0), &s()); }
  std::vector<double> host(const Tensor& t) const { return on(t, cpu(), s()).to_vector(); }
  std::unique_ptr<OwnedStream> stream_;
};

// |actual_i - expected_i| <= atol + rtol·|expected_i| for every i (NaN fails); names the worst.
inline ::testing::AssertionResult all_close(const std::vector<double>& actual, const std::vector<double>& expected,
                                            double rtol, double atol) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure() << "sizes differ: " << actual.size() << " vs " << expected.size();
  size_t bad = 0, worst = 0;
  double worst_ratio = 0.0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double err = std::abs(actual[i] - expected[i]), tol = atol + rtol * std::abs(expected[i]);
    const double ratio = std::isnan(err) ? INFINITY : (tol > 0 ? err / tol : (err > 0 ? INFINITY : 0.0));
    if (ratio > 1.0) bad++;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = i;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << actual.size() << " elements off; worst at " << worst
                                       << ": " << actual[worst] << " vs " << expected[worst]
                                       << " (error/tolerance " << worst_ratio << ", rtol " << rtol << ", atol "
                                       << atol << ")";
}

inline ::testing::AssertionResult all_close(const Tensor& actual, const std::vector<double>& expected, double rtol,
                                            double atol) {
  return all_close(actual.to_vector(), expected, rtol, atol);
}

inline double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

// The message of the rewy::Error that f throws ("" if none).
template <typename F> std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace rewy::test
