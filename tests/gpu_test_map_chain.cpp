// The chunk-map chain (kernels/delta/cuda/map_chain.h), a prototype of the forward state pass with
// one product a step: its maps, formed here on the CPU from a DeltaNet problem, must give the
// delta rule's outputs and final states (against a token-by-token f64 recurrence), and the kernel
// must follow its own arithmetic model (f64 chain over the same bf16 maps, bf16 state operand).
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "engine/dtype.h"
#include "tests/test_engine_util.h"

#if REWY_WITH_CUDA
#include "kernels/delta/cuda/map_chain.h"
#endif

using namespace rewy;
using namespace rewy::test;

#if REWY_WITH_CUDA
namespace {

double rel_norm(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

// A DeltaNet problem and its maps. Token-major [T][H][D] arrays, f64.
struct Problem {
  int64_t T = 0, H = 0, K = 0, V = 0;
  std::vector<int64_t> seq_start;
  std::vector<double> q, k, v, beta, h0, gexp;  // gexp: e^γ per (chunk, head, row), applied to the state
  // maps (rounded to bf16) and the exact outputs
  std::vector<double> M, B, Qp, N, o_ref, ht_ref;
  int64_t chunks = 0;
};

constexpr int64_t kC = 64;

Problem make_problem(uint64_t seed, std::vector<int64_t> lens, int64_t H, int64_t K, int64_t V) {
  Problem pr;
  pr.H = H, pr.K = K, pr.V = V;
  pr.seq_start = {0};
  for (int64_t l : lens) pr.seq_start.push_back(pr.seq_start.back() + l);
  pr.T = pr.seq_start.back();
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  std::uniform_real_distribution<double> ud(0.0, 1.0);
  pr.q.resize(pr.T * H * K), pr.k.resize(pr.T * H * K), pr.v.resize(pr.T * H * V), pr.beta.resize(pr.T * H);
  for (int64_t t = 0; t < pr.T; ++t)
    for (int64_t h = 0; h < H; ++h) {
      double nk = 0;
      for (int64_t d = 0; d < K; ++d) {
        pr.q[(t * H + h) * K + d] = nd(rng) / std::sqrt(double(K));
        nk += std::pow(pr.k[(t * H + h) * K + d] = nd(rng), 2);
      }
      for (int64_t d = 0; d < K; ++d) pr.k[(t * H + h) * K + d] /= std::sqrt(nk);  // unit keys
      for (int64_t e = 0; e < V; ++e) pr.v[(t * H + h) * V + e] = nd(rng);
      pr.beta[t * H + h] = ud(rng);
    }
  const int64_t nseq = int64_t(lens.size());
  pr.h0.resize(nseq * H * K * V);
  for (double& x : pr.h0) x = 0.1 * nd(rng);
  // Token-by-token reference (DeltaNet: no decay), H [K][V]: H += β k (v − Hᵀk)ᵀ, o = Hᵀ q.
  pr.o_ref.assign(pr.T * H * V, 0.0);
  pr.ht_ref.assign(nseq * H * K * V, 0.0);
  for (int64_t n = 0; n < nseq; ++n)
    for (int64_t h = 0; h < H; ++h) {
      std::vector<double> S(pr.h0.begin() + (n * H + h) * K * V, pr.h0.begin() + (n * H + h + 1) * K * V);
      for (int64_t t = pr.seq_start[n]; t < pr.seq_start[n + 1]; ++t) {
        const double* kt = &pr.k[(t * H + h) * K];
        const double* qt = &pr.q[(t * H + h) * K];
        const double b = pr.beta[t * H + h];
        for (int64_t e = 0; e < V; ++e) {
          double skv = 0;
          for (int64_t d = 0; d < K; ++d) skv += S[d * V + e] * kt[d];
          const double delta = b * (pr.v[(t * H + h) * V + e] - skv);
          for (int64_t d = 0; d < K; ++d) S[d * V + e] += kt[d] * delta;
        }
        for (int64_t e = 0; e < V; ++e) {
          double o = 0;
          for (int64_t d = 0; d < K; ++d) o += S[d * V + e] * qt[d];
          pr.o_ref[(t * H + h) * V + e] = o;
        }
      }
      std::copy(S.begin(), S.end(), pr.ht_ref.begin() + (n * H + h) * K * V);
    }
  // The maps per chunk: T = (I + stril(β K Kᵀ))⁻¹, W = T β K, U = T β V, P = tril(Q Kᵀ) (diagonal
  // included), M = Kᵀ W, B = Kᵀ U, Q' = Q − P W, N = P U.
  for (int64_t n = 0; n < nseq; ++n) pr.chunks += (lens[n] + kC - 1) / kC;
  pr.M.assign(pr.chunks * H * K * K, 0.0);
  pr.B.assign(pr.chunks * H * K * V, 0.0);
  pr.Qp.assign(pr.T * H * K, 0.0);
  pr.N.assign(pr.T * H * V, 0.0);
  pr.gexp.assign(pr.chunks * H * K, 1.0);
  int64_t c = 0;
  for (int64_t n = 0; n < nseq; ++n)
    for (int64_t t0 = pr.seq_start[n]; t0 < pr.seq_start[n + 1]; t0 += kC, ++c)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t L = std::min(kC, pr.seq_start[n + 1] - t0);
        auto kk = [&](int64_t i, int64_t d) { return pr.k[((t0 + i) * H + h) * K + d]; };
        auto qq = [&](int64_t i, int64_t d) { return pr.q[((t0 + i) * H + h) * K + d]; };
        auto bb = [&](int64_t i) { return pr.beta[(t0 + i) * H + h]; };
        // T by forward substitution: T = (I + A)⁻¹, A strictly lower.
        std::vector<double> Tm(L * L, 0.0);
        for (int64_t i = 0; i < L; ++i) {
          Tm[i * L + i] = 1.0;
          for (int64_t j = 0; j < i; ++j) {
            double a_ij = 0;
            for (int64_t d = 0; d < K; ++d) a_ij += kk(i, d) * kk(j, d);
            a_ij *= bb(i);
            // row i of T: T_i = e_i − Σ_{j<i} A_ij T_j
            for (int64_t m = 0; m <= j; ++m) Tm[i * L + m] -= a_ij * Tm[j * L + m];
          }
        }
        std::vector<double> W(L * K, 0.0), U(L * V, 0.0), P(L * L, 0.0);
        for (int64_t i = 0; i < L; ++i)
          for (int64_t m = 0; m <= i; ++m) {
            for (int64_t d = 0; d < K; ++d) W[i * K + d] += Tm[i * L + m] * bb(m) * kk(m, d);
            for (int64_t e = 0; e < V; ++e) U[i * V + e] += Tm[i * L + m] * bb(m) * pr.v[((t0 + m) * H + h) * V + e];
          }
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j <= i; ++j)
            for (int64_t d = 0; d < K; ++d) P[i * L + j] += qq(i, d) * kk(j, d);
        for (int64_t d = 0; d < K; ++d)
          for (int64_t j2 = 0; j2 < K; ++j2) {
            double s = 0;
            for (int64_t i = 0; i < L; ++i) s += kk(i, d) * W[i * K + j2];
            pr.M[((c * H + h) * K + d) * K + j2] = round_bf16(s);
          }
        for (int64_t d = 0; d < K; ++d)
          for (int64_t e = 0; e < V; ++e) {
            double s = 0;
            for (int64_t i = 0; i < L; ++i) s += kk(i, d) * U[i * V + e];
            pr.B[((c * H + h) * K + d) * V + e] = round_bf16(s);
          }
        for (int64_t i = 0; i < L; ++i) {
          for (int64_t d = 0; d < K; ++d) {
            double s = qq(i, d);
            for (int64_t j = 0; j <= i; ++j) s -= P[i * L + j] * W[j * K + d];
            pr.Qp[((t0 + i) * H + h) * K + d] = round_bf16(s);
          }
          for (int64_t e = 0; e < V; ++e) {
            double s = 0;
            for (int64_t j = 0; j <= i; ++j) s += P[i * L + j] * U[j * V + e];
            pr.N[((t0 + i) * H + h) * V + e] = round_bf16(s);
          }
        }
      }
  return pr;
}

// The kernel's arithmetic in f64: O = Q' bf16(H) + N, H ← e^γ ⊙ H − M bf16(H) + B, maps as given.
void model_chain(const Problem& pr, const std::vector<double>& gexp, std::vector<double>& o, std::vector<double>& ht) {
  const int64_t H = pr.H, K = pr.K, V = pr.V, nseq = int64_t(pr.seq_start.size()) - 1;
  o.assign(pr.T * H * V, 0.0);
  ht.assign(nseq * H * K * V, 0.0);
  int64_t c0 = 0;
  for (int64_t n = 0; n < nseq; ++n) {
    const int64_t nch = (pr.seq_start[n + 1] - pr.seq_start[n] + kC - 1) / kC;
    for (int64_t h = 0; h < H; ++h) {
      std::vector<double> S(pr.h0.begin() + (n * H + h) * K * V, pr.h0.begin() + (n * H + h + 1) * K * V), Sb(K * V);
      for (int64_t i = 0; i < nch; ++i) {
        const int64_t c = c0 + i, t0 = pr.seq_start[n] + i * kC, L = std::min(kC, pr.seq_start[n + 1] - t0);
        for (int64_t x = 0; x < K * V; ++x) Sb[x] = round_bf16(S[x]);
        for (int64_t r = 0; r < L; ++r)
          for (int64_t e = 0; e < V; ++e) {
            double s = pr.N[((t0 + r) * H + h) * V + e];
            for (int64_t d = 0; d < K; ++d) s += pr.Qp[((t0 + r) * H + h) * K + d] * Sb[d * V + e];
            o[((t0 + r) * H + h) * V + e] = s;
          }
        std::vector<double> Sn(K * V);
        for (int64_t d = 0; d < K; ++d)
          for (int64_t e = 0; e < V; ++e) {
            double s = gexp[(c * H + h) * K + d] * S[d * V + e] + pr.B[((c * H + h) * K + d) * V + e];
            for (int64_t j = 0; j < K; ++j) s -= pr.M[((c * H + h) * K + d) * K + j] * Sb[j * V + e];
            Sn[d * V + e] = s;
          }
        S.swap(Sn);
      }
      std::copy(S.begin(), S.end(), ht.begin() + (n * H + h) * K * V);
    }
    c0 += nch;
  }
}

}  // namespace
#endif

class GpuMapChain : public GpuStreamTest {};

// Every V-slice the kernel takes, K = V = 128 and 64, two sequences with partial last chunks and
// an initial state; outputs on NaN-poisoned tensors.
TEST_F(GpuMapChain, FollowsTheDeltaRuleAndItsModel) {
#if REWY_WITH_CUDA
  REWY_TEST_SEED(seed);
  for (int64_t D : {128, 64}) {
    const Problem pr = make_problem(seed + uint64_t(D), {200, 130}, 2, D, D);
    const int64_t H = pr.H, K = pr.K, V = pr.V, nseq = 2;
    // A decay of the state rows as well (the maps' own e^γ, not DeltaNet's): the model follows it.
    std::vector<double> gexp(pr.gexp.size());
    std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
    std::uniform_real_distribution<double> ud(0.9, 1.0);
    for (double& x : gexp) x = ud(rng);
    for (bool decay : {false, true})
      for (int bv : {16, 32, 64}) {
        SCOPED_TRACE(::testing::Message() << "K = V = " << D << ", V-slice " << bv << (decay ? ", decay" : ""));
        const std::vector<double>& g = decay ? gexp : pr.gexp;
        delta::cuda_impl::MapChainArgs a;
        a.seq_start = pr.seq_start;
        a.M = gpu(Tensor::from_vector(pr.M, {pr.chunks, H, K, K}, DType::BF16));
        a.B = gpu(Tensor::from_vector(pr.B, {pr.chunks, H, K, V}, DType::BF16));
        a.Qp = gpu(Tensor::from_vector(pr.Qp, {pr.T, H, K}, DType::BF16));
        a.N = gpu(Tensor::from_vector(pr.N, {pr.T, H, V}, DType::BF16));
        a.gexp = gpu(Tensor::from_vector(g, {pr.chunks, H, K}, DType::F32));
        a.h0 = gpu(Tensor::from_vector(pr.h0, {nseq, H, K, V}, DType::F32));
        a.o = nan({pr.T, H, V}, DType::BF16);
        a.ht = nan({nseq, H, K, V}, DType::F32);
        a.bv = bv;
        delta::cuda_impl::map_chain_forward(a, s());
        const std::vector<double> o = host(a.o), ht = host(a.ht);
        std::vector<double> o_model, ht_model;
        model_chain(pr, g, o_model, ht_model);
        // Against its model: f32 sums and the bf16 output's rounding (2^-9), the state's bf16 operand
        // rounded from f32 instead of f64 now and then.
        EXPECT_LT(rel_norm(o, o_model), 4e-3);
        EXPECT_LT(rel_norm(ht, ht_model), 1e-3);
        if (!decay) {  // against the delta rule itself: the bf16 maps' error (4e-3 in the chain's norm, CPU)
          EXPECT_LT(rel_norm(o, pr.o_ref), 2e-2);
          EXPECT_LT(rel_norm(ht, pr.ht_ref), 2e-2);
          // and the model is that close too (the maps' algebra, independent of the kernel)
          EXPECT_LT(rel_norm(o_model, pr.o_ref), 2e-2);
        }
      }
  }
#endif
}

// Bad arguments are errors that name the tensor.
TEST_F(GpuMapChain, RejectsMismatchedShapes) {
#if REWY_WITH_CUDA
  const Problem pr = make_problem(7, {64}, 1, 64, 64);
  delta::cuda_impl::MapChainArgs a;
  a.seq_start = pr.seq_start;
  a.M = gpu(Tensor::zeros({pr.chunks, 1, 64, 32}, DType::BF16));  // K × K/2: wrong
  a.B = gpu(Tensor::from_vector(pr.B, {pr.chunks, 1, 64, 64}, DType::BF16));
  a.Qp = gpu(Tensor::from_vector(pr.Qp, {pr.T, 1, 64}, DType::BF16));
  a.N = gpu(Tensor::from_vector(pr.N, {pr.T, 1, 64}, DType::BF16));
  a.gexp = gpu(Tensor::from_vector(pr.gexp, {pr.chunks, 1, 64}, DType::F32));
  a.o = nan({pr.T, 1, 64}, DType::BF16);
  EXPECT_NE(error_of([&] { delta::cuda_impl::map_chain_forward(a, s()); }).find("M must be contiguous bf16"),
            std::string::npos);
#endif
}
