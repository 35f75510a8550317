// Shared by the tests/test_delta_*.cpp binaries: random delta-rule problems drawn like the benchmark
// (bench/README.md), with a fresh seed per problem (REWY_TEST_SEED=<n> replays one), and error
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

#include "engine/rng.h"
#include "kernels/delta/delta.h"

namespace rewy::delta::test {

inline uint64_t fresh_seed() {
  if (const char* s = std::getenv("REWY_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  static std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

enum class Gates {
  Bench,     // logsigmoid(N(0,1)) / 16, the benchmark's gates
  Uniform,   // g ~ U[gate, 0) per step (per channel for KDA/GDN2)
  Constant,  // g = gate everywhere: the per-step bound itself
};

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

inline Problem make_problem(const Case& c, uint64_t seed) {
  Problem p;
  p.seed = seed;
  const int64_t rows = c.B * c.T * c.H, N = c.seqlens.empty() ? c.B : int64_t(c.seqlens.size());
  auto normal = [&](uint64_t off, int64_t n, double sd) {
    std::vector<double> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[i] = sd * rng::normal_f64(seed, off, uint64_t(i));
    return x;
  };
  auto uniform = [&](uint64_t off, int64_t n) {  // (0, 1]
    std::vector<double> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[i] = 1.0 - double(rng::uniform(seed, off, uint64_t(i)));
    return x;
  };
  auto unit_rows = [&](uint64_t off) {  // l2-normalised over K
    std::vector<double> x = normal(off, rows * c.K, 1.0);
    for (int64_t r = 0; r < rows; ++r) {
      double s = 0;
      for (int64_t d = 0; d < c.K; ++d) s += x[r * c.K + d] * x[r * c.K + d];
      for (int64_t d = 0; d < c.K; ++d) x[r * c.K + d] /= std::sqrt(s);
    }
    return x;
  };
  const Shape bth{c.B, c.T, c.H}, bthk{c.B, c.T, c.H, c.K}, bthv{c.B, c.T, c.H, c.V}, st{N, c.H, c.K, c.V};
  p.in.q = Tensor::from_vector(unit_rows(1), bthk, c.dtype);
  p.in.k = Tensor::from_vector(unit_rows(2), bthk, c.dtype);
  p.in.v = Tensor::from_vector(normal(3, rows * c.V, 1.0), bthv, c.dtype);
  if (has_beta(c.variant)) {
    std::vector<double> beta = uniform(4, rows);
    for (double& x : beta) x = c.wide_beta ? 2.0 * x : 1.0 / (1.0 + std::exp(-x));
    p.in.beta = Tensor::from_vector(beta, bth, c.dtype);
  } else {
    p.in.b = Tensor::from_vector(uniform(5, rows * c.K), bthk, c.dtype);
    p.in.w = Tensor::from_vector(uniform(6, rows * c.V), bthv, c.dtype);
  }
  if (has_gate(c.variant)) {
    const int64_t n = channel_gate(c.variant) ? rows * c.K : rows;
    std::vector<double> g = c.gates == Gates::Bench ? normal(7, n, 1.0) : uniform(7, n);
    for (double& x : g) {
      if (c.gates == Gates::Bench) x = -std::log1p(std::exp(-x)) / 16;  // logsigmoid(x) / 16
      if (c.gates == Gates::Uniform) x = c.gate * x;
      if (c.gates == Gates::Constant) x = c.gate;
    }
    p.in.g = Tensor::from_vector(g, channel_gate(c.variant) ? bthk : bth, c.dtype);
  }
  if (c.h0) p.in.h0 = Tensor::from_vector(normal(8, N * c.H * c.K * c.V, 0.1), st, c.dtype);
  if (!c.seqlens.empty()) {
    std::vector<double> cu{0.0};
    for (int64_t l : c.seqlens) cu.push_back(cu.back() + double(l));
    p.in.cu_seqlens = Tensor::from_vector(cu, {N + 1}, c.cu_i32 ? DType::I32 : DType::I64);
  }
  p.dout = Tensor::from_vector(normal(9, rows * c.V, 1.0), bthv, c.dtype);
  if (c.dht) p.dht = Tensor::from_vector(normal(10, N * c.H * c.K * c.V, 1.0), st, c.dtype);
  return p;
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

inline bool all_finite(const Tensor& t) {
  for (double x : t.to_vector())
    if (!std::isfinite(x)) return false;
  return true;
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
