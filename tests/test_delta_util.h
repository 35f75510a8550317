// Shared by the tests/test_delta_*.cpp binaries: random delta-rule problems drawn like the benchmark
// (make_random_case, kernels/delta/random_inputs.h), with a fresh seed per problem (REWY_TEST_SEED=<n> replays one), and error
// measures. Every problem's seed goes into the failure message through SCOPED_TRACE.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/ranges.h>

#include "kernels/delta/delta.h"
#include "kernels/delta/random_inputs.h"

namespace rewy::delta::test {

inline uint64_t fresh_seed() {
  if (const char* s = std::getenv("REWY_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  static std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

struct Case {
  Variant variant = Variant::GDN;
  int64_t B = 1, T = 64, H = 2, K = 16, V = 24;
  std::vector<int64_t> seqlens;  // varlen when non-empty: B == 1 and the lengths sum to T
  bool cu_i32 = false;           // cu_seqlens as i32 (else i64)
  bool h0 = true, dht = true;
  Gates gates = Gates::Bench;
  double gate = -5.0;      // for Uniform / Constant
  bool wide_beta = false;  // β ~ U(0, 2) instead of sigmoid(U(0, 1))
  DType dtype = DType::F64;

  std::string str() const {
    std::string s = fmt::format("{} B={} T={} H={} K={} V={}", name(variant), B, T, H, K, V);
    if (!seqlens.empty()) s += fmt::format(" seqlens=[{}]", fmt::join(seqlens, ","));
    s += fmt::format(" h0={} dht={} gates={}{} {}", h0, dht, int(gates), gates == Gates::Bench ? "" : fmt::format(" ({})", gate),
                     dtype_name(dtype));
    if (wide_beta) s += " beta in (0,2)";
    return s;
  }
};

struct Problem {
  Inputs in;
  Tensor dout, dht;
  uint64_t seed = 0;
};

// The problem of `c` drawn with `seed` by make_random_case (no bf16 rounding of the values).
inline Problem make_problem(const Case& c, uint64_t seed) {
  RandomSpec sp;
  sp.variant = c.variant;
  sp.B = c.B, sp.T = c.T, sp.H = c.H, sp.K = c.K, sp.V = c.V;
  sp.seqlens = c.seqlens;
  sp.h0 = c.h0, sp.dht = c.dht;
  sp.gates = c.gates, sp.gate = c.gate, sp.wide_beta = c.wide_beta, sp.cu_i32 = c.cu_i32;
  sp.round_bf16 = false;
  sp.dtype = c.dtype;
  sp.seed = seed;
  RandomCase rc = make_random_case(sp);
  return Problem{rc.in, rc.dout, rc.dht, seed};
}

inline Config config(Variant v, Impl impl, BackwardAlgo algo = BackwardAlgo::ReWY, Policy pol = Policy::Recompute,
                     int chunk = 64) {
  Config c;
  c.variant = v, c.impl = impl, c.backward = algo, c.policy = pol, c.chunk = chunk;
  return c;
}

inline Grads run_backward(const Config& cfg, const Problem& p) {
  const ForwardResult f = forward(cfg, p.in);
  return backward(cfg, p.in, f, p.dout, p.dht);
}

// Normwise relative error ||a − ref||₂ / ||ref||₂ (||a||₂ when ref is zero).
inline double rel_err(const Tensor& a, const Tensor& ref) {
  const std::vector<double> x = a.to_vector(), y = ref.to_vector();
  EXPECT_EQ(x.size(), y.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    num += (x[i] - y[i]) * (x[i] - y[i]);
    den += y[i] * y[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

inline std::vector<std::pair<const char*, Tensor>> named(const Grads& g) {
  return {{"dq", g.dq}, {"dk", g.dk}, {"dv", g.dv}, {"dbeta", g.dbeta},
          {"dg", g.dg}, {"db", g.db}, {"dw", g.dw}, {"dh0", g.dh0}};
}

// Every gradient of `a` within `tol` (normwise relative) of `ref`; the same set defined.
inline void expect_grads_close(const Grads& a, const Grads& ref, double tol, const std::string& what) {
  const auto na = named(a), nr = named(ref);
  for (size_t i = 0; i < na.size(); ++i) {
    ASSERT_EQ(na[i].second.defined(), nr[i].second.defined()) << what << ": " << na[i].first;
    if (!nr[i].second.defined()) continue;
    EXPECT_LT(rel_err(na[i].second, nr[i].second), tol) << what << ": " << na[i].first;
  }
}

// The largest relative error over all gradients.
inline double max_grad_err(const Grads& a, const Grads& ref) {
  double e = 0;
  const auto na = named(a), nr = named(ref);
  for (size_t i = 0; i < na.size(); ++i)
    if (nr[i].second.defined()) e = std::max(e, rel_err(na[i].second, nr[i].second));
  return e;
}

inline std::vector<Variant> all_variants() { return {Variant::DeltaNet, Variant::GDN, Variant::KDA, Variant::GDN2}; }

inline std::string variant_name(const testing::TestParamInfo<Variant>& i) { return name(i.param); }

}  // namespace rewy::delta::test
