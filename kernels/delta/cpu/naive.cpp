#include "kernels/delta/cpu/naive.h"

#include <cmath>

namespace rewy::delta::cpu {

namespace {

std::vector<double> host(const Tensor& t) { return t.defined() ? t.to_vector() : std::vector<double>{}; }

// The inputs as f64 host arrays in the flattened [B*T, H, ·] layout, with the four
// parametrisations read through one interface (erase b_t, write ω_t, log-decay g_t per channel).
struct Recurrence {
  Variant variant;
  int64_t H, K, V;
  double scale;
  std::vector<double> q, k, v, beta, g, b, w, h0;

  Recurrence(const Config& cfg, const Inputs& in, const Dims& d)
      : variant(cfg.variant), H(d.H), K(d.K), V(d.V),
        scale(cfg.scale != 0.0 ? cfg.scale : 1.0 / std::sqrt(double(d.K))),
        q(host(in.q)), k(host(in.k)), v(host(in.v)), beta(host(in.beta)), g(host(in.g)), b(host(in.b)),
        w(host(in.w)), h0(host(in.h0)) {}

  int64_t row(int64_t t, int64_t h) const { return t * H + h; }
  double erase(int64_t r, int64_t d) const { return has_beta(variant) ? beta[r] : b[r * K + d]; }
  double write(int64_t r, int64_t j) const { return has_beta(variant) ? beta[r] : w[r * V + j]; }
  double gate(int64_t r, int64_t d) const {
    if (!has_gate(variant)) return 0.0;
    return channel_gate(variant) ? g[r * K + d] : g[r];
  }

  void initial_state(int64_t n, int64_t h, double* S) const {
    for (int64_t i = 0; i < K * V; ++i) S[i] = h0.empty() ? 0.0 : h0[(n * H + h) * K * V + i];
  }

  // S ← (I − k (b⊙k)ᵀ) Diag(e^g) S + k (ω⊙v)ᵀ for token row r; e = ω⊙v − S'ᵀ(b⊙k) is left in e[V].
  void step(int64_t r, double* S, double* e) const {
    const double* kt = &k[r * K];
    for (int64_t d = 0; d < K; ++d) {
      const double f = std::exp(gate(r, d));
      for (int64_t j = 0; j < V; ++j) S[d * V + j] *= f;
    }
    for (int64_t j = 0; j < V; ++j) {
      double s = 0.0;
      for (int64_t d = 0; d < K; ++d) s += S[d * V + j] * erase(r, d) * kt[d];
      e[j] = write(r, j) * v[r * V + j] - s;
    }
    for (int64_t d = 0; d < K; ++d)
      for (int64_t j = 0; j < V; ++j) S[d * V + j] += kt[d] * e[j];
  }

  // o_t = scale · S_tᵀ q_t (the state after the update, §1).
  void output(int64_t r, const double* S, double* o) const {
    for (int64_t j = 0; j < V; ++j) {
      double s = 0.0;
      for (int64_t d = 0; d < K; ++d) s += S[d * V + j] * q[r * K + d];
      o[j] = scale * s;
    }
  }
};

}  // namespace

ForwardResult naive_forward(const Config& cfg, const Inputs& in, const Dims& dims) {
  const Recurrence rec(cfg, in, dims);
  const int64_t H = dims.H, K = dims.K, V = dims.V;
  std::vector<double> o(size_t(dims.B * dims.T * H * V)), ht(size_t(dims.N * H * K * V));
  std::vector<double> e(static_cast<size_t>(V));
  for (int64_t n = 0; n < dims.N; ++n)
    for (int64_t h = 0; h < H; ++h) {
      double* S = &ht[size_t((n * H + h) * K * V)];
      rec.initial_state(n, h, S);
      for (int64_t t = dims.seq_start[n]; t < dims.seq_start[n + 1]; ++t) {
        rec.step(rec.row(t, h), S, e.data());
        rec.output(rec.row(t, h), S, &o[size_t(rec.row(t, h) * V)]);
      }
    }
  const DType dt = in.q.dtype();
  ForwardResult r;
  r.o = Tensor::from_vector(o, in.v.shape(), dt);
  if (cfg.output_final_state) r.ht = Tensor::from_vector(ht, {dims.N, H, K, V}, dt);
  r.saved.policy = cfg.policy;
  return r;
}

Grads naive_backward(const Config& cfg, const Inputs& in, const Dims& dims, const Tensor& dout, const Tensor& dht) {
  const Recurrence rec(cfg, in, dims);
  const int64_t H = dims.H, K = dims.K, V = dims.V, KV = K * V;
  const std::vector<double> dO = dout.to_vector(), dhT = host(dht);
  const size_t rows = size_t(dims.B * dims.T * H);
  std::vector<double> dq(rows * K), dk(rows * K), dv(rows * V), db(rows * K), dw(rows * V), dg(rows * K);
  std::vector<double> dh0(size_t(dims.N * H * KV));
  const size_t nV = size_t(V), nK = size_t(K), nKV = size_t(KV);
  std::vector<double> states, e(nV), de(nV), dbk(nK), dS(nKV), Sp(nKV);

  for (int64_t n = 0; n < dims.N; ++n)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t t0 = dims.seq_start[n], L = dims.seq_start[n + 1] - t0;
      // states[s] = S_s for s = 0..L (S_0 the initial state).
      states.assign(size_t((L + 1) * KV), 0.0);
      rec.initial_state(n, h, states.data());
      for (int64_t s = 0; s < L; ++s) {
        std::copy(&states[size_t(s * KV)], &states[size_t((s + 1) * KV)], &states[size_t((s + 1) * KV)]);
        rec.step(rec.row(t0 + s, h), &states[size_t((s + 1) * KV)], e.data());
      }
      for (int64_t i = 0; i < KV; ++i) dS[i] = dhT.empty() ? 0.0 : dhT[(n * H + h) * KV + i];

      for (int64_t s = L - 1; s >= 0; --s) {
        const int64_t r = rec.row(t0 + s, h);
        const double* St = &states[size_t((s + 1) * KV)];
        const double* Sprev = &states[size_t(s * KV)];
        const double *qt = &rec.q[r * K], *kt = &rec.k[r * K], *vt = &rec.v[r * V], *dot = &dO[r * V];
        // o_t = scale · S_tᵀ q_t
        for (int64_t d = 0; d < K; ++d) {
          double acc = 0.0;
          for (int64_t j = 0; j < V; ++j) {
            acc += St[d * V + j] * dot[j];
            dS[d * V + j] += rec.scale * qt[d] * dot[j];
          }
          dq[r * K + d] = rec.scale * acc;
        }
        // S' = Diag(e^g) S_{t−1}, e = ω⊙v − S'ᵀ(b⊙k) (recomputed)
        for (int64_t d = 0; d < K; ++d) {
          const double f = std::exp(rec.gate(r, d));
          for (int64_t j = 0; j < V; ++j) Sp[d * V + j] = f * Sprev[d * V + j];
        }
        for (int64_t j = 0; j < V; ++j) {
          double acc = 0.0;
          for (int64_t d = 0; d < K; ++d) acc += Sp[d * V + j] * rec.erase(r, d) * kt[d];
          e[j] = rec.write(r, j) * vt[j] - acc;
        }
        // S_t = S' + k eᵀ: ∂k = ∂S_t e, ∂e = ∂S_tᵀ k, ∂S' = ∂S_t (+ the erase term below)
        for (int64_t d = 0; d < K; ++d) {
          double acc = 0.0;
          for (int64_t j = 0; j < V; ++j) acc += dS[d * V + j] * e[j];
          dk[r * K + d] = acc;
        }
        for (int64_t j = 0; j < V; ++j) {
          double acc = 0.0;
          for (int64_t d = 0; d < K; ++d) acc += dS[d * V + j] * kt[d];
          de[j] = acc;
          dw[r * V + j] = vt[j] * de[j];
          dv[r * V + j] = rec.write(r, j) * de[j];
        }
        // e = ω⊙v − S'ᵀ bk with bk = b⊙k: ∂bk = −S' ∂e, ∂S' −= bk ∂eᵀ
        for (int64_t d = 0; d < K; ++d) {
          double acc = 0.0;
          for (int64_t j = 0; j < V; ++j) acc += Sp[d * V + j] * de[j];
          dbk[d] = -acc;
          const double bk = rec.erase(r, d) * kt[d];
          for (int64_t j = 0; j < V; ++j) dS[d * V + j] -= bk * de[j];
          dk[r * K + d] += rec.erase(r, d) * dbk[d];
          db[r * K + d] = kt[d] * dbk[d];
        }
        // S' = Diag(e^g) S_{t−1}: ∂g_d = Σ_v S'_dv ∂S'_dv, ∂S_{t−1} = Diag(e^g) ∂S'
        for (int64_t d = 0; d < K; ++d) {
          const double f = std::exp(rec.gate(r, d));
          double acc = 0.0;
          for (int64_t j = 0; j < V; ++j) {
            acc += Sp[d * V + j] * dS[d * V + j];
            dS[d * V + j] *= f;
          }
          dg[r * K + d] = acc;
        }
      }
      std::copy(dS.begin(), dS.end(), &dh0[size_t((n * H + h) * KV)]);
    }

  const DType dt = in.q.dtype();
  Grads gr;
  gr.dq = Tensor::from_vector(dq, in.q.shape(), dt);
  gr.dk = Tensor::from_vector(dk, in.k.shape(), dt);
  gr.dv = Tensor::from_vector(dv, in.v.shape(), dt);
  if (has_beta(cfg.variant)) {  // β is both the erase and the write gate: ∂β = Σ_d ∂b_d + Σ_v ∂ω_v
    std::vector<double> dbeta(rows, 0.0);
    for (size_t r = 0; r < rows; ++r) {
      for (int64_t d = 0; d < K; ++d) dbeta[r] += db[r * K + d];
      for (int64_t j = 0; j < V; ++j) dbeta[r] += dw[r * V + j];
    }
    gr.dbeta = Tensor::from_vector(dbeta, in.beta.shape(), dt);
  } else {
    gr.db = Tensor::from_vector(db, in.b.shape(), dt);
    gr.dw = Tensor::from_vector(dw, in.w.shape(), dt);
  }
  if (channel_gate(cfg.variant)) {
    gr.dg = Tensor::from_vector(dg, in.g.shape(), dt);
  } else if (has_gate(cfg.variant)) {  // one scalar decay per row: the channel sum
    std::vector<double> dgs(rows, 0.0);
    for (size_t r = 0; r < rows; ++r)
      for (int64_t d = 0; d < K; ++d) dgs[r] += dg[r * K + d];
    gr.dg = Tensor::from_vector(dgs, in.g.shape(), dt);
  }
  if (in.h0.defined()) gr.dh0 = Tensor::from_vector(dh0, in.h0.shape(), dt);
  return gr;
}

}  // namespace rewy::delta::cpu
