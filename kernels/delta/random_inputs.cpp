#include "kernels/delta/random_inputs.h"

#include <cmath>

#include "engine/rng.h"

namespace rewy::delta {
namespace {

// Draws consecutive elements of one Philox stream; each tensor gets its own stream offset.
struct Drawer {
  uint64_t seed;
  uint64_t stream = 0;
  std::vector<double> normal(int64_t n) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = rng::normal_f64(seed, stream, uint64_t(i));
    ++stream;
    return v;
  }
  std::vector<double> uniform(int64_t n) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = rng::uniform(seed, stream, uint64_t(i));
    ++stream;
    return v;
  }
};

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double logsigmoid(double x) { return x < 0 ? x - std::log1p(std::exp(x)) : -std::log1p(std::exp(-x)); }
double bf16_value(double x) { return double(float(bf16(float(x)))); }

void l2_normalise_rows(std::vector<double>& v, int64_t d) {
  for (size_t r = 0; r < v.size() / size_t(d); ++r) {
    double s = 0;
    for (int64_t i = 0; i < d; ++i) s += v[r * d + i] * v[r * d + i];
    s = 1.0 / std::sqrt(std::max(s, 1e-30));
    for (int64_t i = 0; i < d; ++i) v[r * d + i] *= s;
  }
}

}  // namespace

RandomCase make_random_case(const RandomSpec& sp) {
  REWY_CHECK(sp.seqlens.empty() || sp.B == 1, "varlen random case needs B == 1");
  int64_t N = sp.B;
  if (!sp.seqlens.empty()) {
    int64_t total = 0;
    for (auto l : sp.seqlens) total += l;
    REWY_CHECK(total == sp.T, "seqlens sum to {}, T = {}", total, sp.T);
    N = int64_t(sp.seqlens.size());
  }
  Drawer dr{sp.seed};
  const int64_t BT = sp.B * sp.T, H = sp.H, K = sp.K, V = sp.V;
  auto round = [&](std::vector<double>& v) {
    if (sp.round_bf16)
      for (auto& x : v) x = bf16_value(x);
  };
  auto make = [&](std::vector<double> v, Shape s) { return Tensor::from_vector(v, s, sp.dtype); };
  RandomCase c;
  auto q = dr.normal(BT * H * K), k = dr.normal(BT * H * K), v = dr.normal(BT * H * V);
  l2_normalise_rows(q, K);
  l2_normalise_rows(k, K);
  round(q), round(k), round(v);
  c.in.q = make(q, {sp.B, sp.T, H, K});
  c.in.k = make(k, {sp.B, sp.T, H, K});
  c.in.v = make(v, {sp.B, sp.T, H, V});
  if (has_beta(sp.variant)) {
    auto beta = dr.uniform(BT * H);
    for (auto& x : beta) x = sp.wide_beta ? 2.0 * (1.0 - x) : sigmoid(x);
    round(beta);
    c.in.beta = make(beta, {sp.B, sp.T, H});
  }
  if (has_gate(sp.variant)) {
    const bool vec = channel_gate(sp.variant);
    const int64_t n = vec ? BT * H * K : BT * H;
    const bool normal = sp.gates == Gates::Bench || sp.gates == Gates::SafeGate;
    auto g = normal ? dr.normal(n) : dr.uniform(n);
    for (auto& x : g) {
      switch (sp.gates) {
        case Gates::Bench: x = logsigmoid(x) / 16.0; break;
        case Gates::SafeGate: x = -5.0 * sigmoid(x); break;
        case Gates::Uniform: x = sp.gate * (1.0 - x); break;  // (0, 1]: never a zero decay
        case Gates::Constant: x = sp.gate; break;
      }
    }
    for (auto& x : g) x = double(float(x));  // the kernels take f32 gates
    c.in.g = make(g, vec ? Shape{sp.B, sp.T, H, K} : Shape{sp.B, sp.T, H});
  }
  if (sp.variant == Variant::GDN2) {
    auto b = dr.uniform(BT * H * K), w = dr.uniform(BT * H * V);
    round(b), round(w);
    c.in.b = make(b, {sp.B, sp.T, H, K});
    c.in.w = make(w, {sp.B, sp.T, H, V});
  }
  if (sp.h0) {
    auto h0 = dr.normal(N * H * K * V);
    for (auto& x : h0) x = double(float(0.1 * x));
    c.in.h0 = make(h0, {N, H, K, V});
  }
  if (!sp.seqlens.empty()) {
    std::vector<double> cu{0};
    for (auto l : sp.seqlens) cu.push_back(cu.back() + double(l));
    c.in.cu_seqlens = Tensor::from_vector(cu, {N + 1}, sp.cu_i32 ? DType::I32 : DType::I64);
  }
  auto dout = dr.normal(BT * H * V);
  round(dout);
  c.dout = make(dout, {sp.B, sp.T, H, V});
  if (sp.dht) {
    auto dht = dr.normal(N * H * K * V);
    for (auto& x : dht) x = double(float(x));
    c.dht = make(dht, {N, H, K, V});
  }
  return c;
}

RandomCase to_cuda(const RandomCase& c, Device dev) {
  auto cast = [&](const Tensor& t, DType dt) { return t.defined() ? t.to(dt).to(dev) : Tensor(); };
  RandomCase r;
  r.in.q = cast(c.in.q, DType::BF16);
  r.in.k = cast(c.in.k, DType::BF16);
  r.in.v = cast(c.in.v, DType::BF16);
  r.in.beta = cast(c.in.beta, DType::BF16);
  r.in.b = cast(c.in.b, DType::BF16);
  r.in.w = cast(c.in.w, DType::BF16);
  r.in.g = cast(c.in.g, DType::F32);
  r.in.h0 = cast(c.in.h0, DType::F32);
  r.in.cu_seqlens = cast(c.in.cu_seqlens, DType::I32);
  r.dout = cast(c.dout, DType::BF16);
  r.dht = cast(c.dht, DType::F32);
  return r;
}

RandomCase to_cpu(const RandomCase& c, DType dt) {
  auto cast = [&](const Tensor& t) { return t.defined() ? t.to(cpu()).to(dt) : Tensor(); };
  RandomCase r;
  r.in.q = cast(c.in.q);
  r.in.k = cast(c.in.k);
  r.in.v = cast(c.in.v);
  r.in.beta = cast(c.in.beta);
  r.in.b = cast(c.in.b);
  r.in.w = cast(c.in.w);
  r.in.g = cast(c.in.g);
  r.in.h0 = cast(c.in.h0);
  r.in.cu_seqlens = c.in.cu_seqlens.defined() ? c.in.cu_seqlens.to(cpu()) : Tensor();
  r.dout = cast(c.dout);
  r.dht = cast(c.dht);
  return r;
}

double relative_error(const Tensor& a, const Tensor& b) {
  REWY_CHECK(a.shape() == b.shape(), "relative_error: shapes {} and {}", shape_str(a.shape()), shape_str(b.shape()));
  const auto x = a.to_vector(), y = b.to_vector();
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    num += (x[i] - y[i]) * (x[i] - y[i]);
    den += y[i] * y[i];
  }
  if (std::isnan(num)) return INFINITY;
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-300);
}

bool all_finite(const Tensor& t) {
  for (double x : t.to_vector())
    if (!std::isfinite(x)) return false;
  return true;
}

std::map<std::string, Tensor> run_named(const Config& cfg, const RandomCase& c) {
  const ForwardResult f = forward(cfg, c.in);
  const Grads g = backward(cfg, c.in, f, c.dout, c.dht);
  std::map<std::string, Tensor> out;
  for (auto [n, t] : {std::pair{"o", f.o}, {"ht", f.ht}, {"dq", g.dq}, {"dk", g.dk}, {"dv", g.dv}, {"dbeta", g.dbeta},
                      {"dg", g.dg}, {"db", g.db}, {"dw", g.dw}, {"dh0", g.dh0}})
    if (t.defined()) out[n] = t;
  return out;
}

std::map<std::string, Tensor> cpu_twin(const Config& cfg_in, const RandomCase& c64) {
  Config cfg = cfg_in;
  cfg.round_to_bf16 = true;
  return run_named(cfg, to_cpu(c64, DType::F32));
}

CpuReference cpu_reference_with(const Config& cfg_in, const RandomCase& c64) {
  Config cfg = cfg_in;
  cfg.round_to_bf16 = false;
  CpuReference r;
  r.exact = run_named(cfg, c64);
  r.twin = cpu_twin(cfg, c64);
  return r;
}

CpuReference cpu_reference(Variant v, const RandomCase& c64) {
  Config cfg;
  cfg.variant = v;
  return cpu_reference_with(cfg, c64);
}

}  // namespace rewy::delta
