// Building blocks of the CPU chunk path, one chunk of one (sequence, head) at a time, templated on
// the compute type T (float or double). Notation and sections: delta-rule-math.md (§n).
// All matrices are row-major and local to the chunk: n rows (n <= C; a ragged chunk has n < C).
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/check.h"
#include "engine/dtype.h"
#include "kernels/delta/cpu/local_gemm.h"
#include "kernels/delta/delta.h"

namespace rewy::delta::cpu {

enum class GateKind { None, Scalar, Channel };
inline GateKind gate_kind(Variant v) {
  return !has_gate(v) ? GateKind::None : channel_gate(v) ? GateKind::Channel : GateKind::Scalar;
}

constexpr int kSubChunk = 16;              // rows of a §6 sub-chunk (FLA's vector-gate intra blocks)
constexpr double kMaxCentredExponent = 80;  // §6: |G − c| <= 80 leaves e^8 headroom below f32's e^88.7

// What a bf16 store followed by a load does, when `on` (round_to_bf16).
template <typename T>
void round_bf16_if(bool on, T* p, size_t n) {
  if (on)
    for (size_t i = 0; i < n; ++i) p[i] = round_bf16(p[i]);
}
template <typename T>
void round_bf16_if(bool on, std::vector<T>& v) {
  round_bf16_if(on, v.data(), v.size());
}
// The same for an operand the kernels carry as two bf16 terms: bf16(x) + bf16(x − bf16(x)).
template <typename T>
void round_bf16_two_terms_if(bool on, std::vector<T>& v) {
  if (on)
    for (T& x : v) {
      const T hi = round_bf16(x);
      x = hi + round_bf16(x - hi);
    }
}

// The whole problem as contiguous arrays in the flattened token layout [B*T, H, ·].
template <typename T>
struct Problem {
  Variant variant = Variant::GDN;
  GateKind gk = GateKind::None;
  int H = 0, K = 0, V = 0, C = 0;
  T scale = T(1);
  bool round = false;  // round_to_bf16
  // With round: ∂K̄'s state term as the CUDA kernels form it under Config::dk_state_term On (ReWY,
  // where rw_from_ru.h's rewy_dk_state_term holds): s E (bf16(∂H⁺/s))ᵀ, rounded to bf16.
  bool dk_state = false;
  const T *q = nullptr, *k = nullptr, *v = nullptr, *beta = nullptr, *g = nullptr, *b = nullptr, *w = nullptr;
};

// rows × D block of head h starting at token t0: dst[i*D + d] = src[((t0 + i)*H + h)*D + d].
template <typename T>
void gather_rows(const T* src, int64_t t0, int rows, int H, int h, int D, T* dst) {
  for (int i = 0; i < rows; ++i) std::copy_n(src + ((t0 + i) * H + h) * int64_t(D), D, dst + size_t(i) * D);
}
template <typename T>
void scatter_rows(T* dst, int64_t t0, int rows, int H, int h, int D, const T* src) {
  for (int i = 0; i < rows; ++i) std::copy_n(src + size_t(i) * D, D, dst + ((t0 + i) * H + h) * int64_t(D));
}
// The n×n matrix of a chunk in the [B, T, H, C] layout (columns n..C−1 hold zeros).
template <typename T>
void load_square(const T* src, int64_t t0, int n, int H, int h, int C, T* dst) {
  for (int i = 0; i < n; ++i) std::copy_n(src + ((t0 + i) * H + h) * int64_t(C), n, dst + size_t(i) * n);
}
template <typename T>
void store_square(T* dst, int64_t t0, int n, int H, int h, int C, const T* src) {
  for (int i = 0; i < n; ++i) {
    T* row = dst + ((t0 + i) * H + h) * int64_t(C);
    std::copy_n(src + size_t(i) * n, n, row);
    std::fill(row + n, row + C, T(0));
  }
}

// One chunk's inputs and gate factors. The four variants are read through one GDN2-shaped
// interface: erase gate b (β 1 for the β variants), write gate ω (β 1), decay per channel.
template <typename T>
struct ChunkData {
  GateKind gk = GateKind::None;
  int n = 0, K = 0, V = 0;
  std::vector<T> q, k, v;       // [n, K], [n, K], [n, V]
  std::vector<T> erase, write;  // b [n, K], ω [n, V]
  std::vector<T> beta;          // [n] (β variants)
  std::vector<T> G;             // in-chunk cumsum of g: [n] scalar, [n, K] channel, empty for DeltaNet
  std::vector<T> gam;           // Γ = e^G per channel, [n, K]
  std::vector<T> gbar;          // e^{γ − G}, [n, K] (γ = G at the last row)
  std::vector<T> glast;         // e^γ, [K]

  T Gc(int i, int d) const { return gk == GateKind::Channel ? G[size_t(i) * K + d] : G[size_t(i)]; }

  // Gathers rows [t0, t0 + n) of head h; G comes from `Gs` (the saved in-chunk cumsum, Saved layout).
  void load(const Problem<T>& p, int64_t t0, int rows, int h, const T* Gs) {
    gk = p.gk, n = rows, K = p.K, V = p.V;
    const int H = p.H;
    q.resize(size_t(n) * K), k.resize(size_t(n) * K), v.resize(size_t(n) * V);
    gather_rows(p.q, t0, n, H, h, K, q.data());
    gather_rows(p.k, t0, n, H, h, K, k.data());
    gather_rows(p.v, t0, n, H, h, V, v.data());
    erase.resize(size_t(n) * K), write.resize(size_t(n) * V);
    if (has_beta(p.variant)) {
      beta.resize(size_t(n));
      gather_rows(p.beta, t0, n, H, h, 1, beta.data());
      for (int i = 0; i < n; ++i) {
        std::fill_n(&erase[size_t(i) * K], K, beta[i]);
        std::fill_n(&write[size_t(i) * V], V, beta[i]);
      }
    } else {
      gather_rows(p.b, t0, n, H, h, K, erase.data());
      gather_rows(p.w, t0, n, H, h, V, write.data());
    }
    gam.assign(size_t(n) * K, T(1)), gbar.assign(size_t(n) * K, T(1)), glast.assign(size_t(K), T(1));
    if (gk == GateKind::None) return;
    const int Dg = gk == GateKind::Channel ? K : 1;
    G.resize(size_t(n) * Dg);
    gather_rows(Gs, t0, n, H, h, Dg, G.data());
    for (int d = 0; d < K; ++d) glast[d] = std::exp(Gc(n - 1, d));
    for (int i = 0; i < n; ++i)
      for (int d = 0; d < K; ++d) {
        gam[size_t(i) * K + d] = std::exp(Gc(i, d));
        gbar[size_t(i) * K + d] = std::exp(Gc(n - 1, d) - Gc(i, d));  // <= 1: G is non-increasing
      }
  }

  // Y = [Y_W | Y_U] = [b ⊙ k ⊙ Γ | ω ⊙ v], [n, K + V] (§2.1).
  std::vector<T> wy_rhs() const {
    const int KV = K + V;
    std::vector<T> Y(size_t(n) * KV);
    for (int i = 0; i < n; ++i) {
      for (int d = 0; d < K; ++d) {
        const size_t o = size_t(i) * K + d;
        Y[size_t(i) * KV + d] = erase[o] * k[o] * gam[o];
      }
      for (int j = 0; j < V; ++j) Y[size_t(i) * KV + K + j] = write[size_t(i) * V + j] * v[size_t(i) * V + j];
    }
    return Y;
  }
};

// In-chunk cumsum of g (§2.1), restarted at t0: Gs rows [t0, t0 + n) of head h.
template <typename T>
void gate_cumsum(const Problem<T>& p, int64_t t0, int n, int h, T* Gs) {
  const int Dg = p.gk == GateKind::Channel ? p.K : 1;
  for (int d = 0; d < Dg; ++d) {
    T acc = T(0);
    for (int i = 0; i < n; ++i) {
      const int64_t o = ((t0 + i) * p.H + h) * int64_t(Dg) + d;
      acc += p.g[o];
      Gs[o] = acc;
    }
  }
}

// The decay inside one chunk's C×C products: out_ij = Σ_d R_id Cl_jd e^{G_id − G_jd} on a
// lower-triangular mask, and the two contractions of a cotangent dM of such a product,
//   D^r_i = Σ_j dM_ij Cl_j ⊙ e^{G_i − G_j},   D^c_j = Σ_i dM_ij R_i ⊙ e^{G_i − G_j}.
// None/Scalar: the decay factors out of the channel sum; e^{G_i − G_j} is formed only for i >= j
// (exponent <= 0) and applied with a select. Channel: §6 sub-chunks of 16 rows; off-diagonal
// blocks referenced to the first row of the later sub-chunk (every factor <= 1), diagonal blocks
// centred at the per-channel mid-range (factors <= e^{span/2}), or evaluated pair by pair when a
// block's span/2 exceeds kMaxCentredExponent (only unbounded gates get there).
// Each public method records one product, whatever its internals. `round` (the bf16 twin): the
// scaled channel-gate operands are rounded to bf16, as the kernels' tensor-core operands are;
// `two_term` marks the ones the kernels carry as two bf16 terms (hi + rounded remainder).
template <typename T>
class Gating {
 public:
  explicit Gating(const ChunkData<T>& cd, bool round = false) : cd_(cd), n_(cd.n), K_(cd.K), round_(round) {
    if (cd.gk == GateKind::Channel) build_blocks();
  }

  // out [n, n] = the gated R Clᵀ on i > j (strict) or i >= j; exact zeros elsewhere.
  // two_term_rows: the scaled row operand in two bf16 terms (P's; the kernels' wy_prep).
  void product(const char* stage, const char* tag, bool strict, const T* R, const T* Cl, T* out,
               bool two_term_rows = false) const {
    record_gemm(stage, tag, n_, n_, K_);
    const int n = n_, K = K_;
    if (cd_.gk != GateKind::Channel) {
      gemm(n, n, K, T(1), R, K, false, Cl, K, true, T(0), out, n);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          T& o = out[size_t(i) * n + j];
          const bool keep = strict ? i > j : i >= j;
          o = keep ? o * decay(i, j) : T(0);
        }
      return;
    }
    std::fill_n(out, size_t(n) * n, T(0));
    std::vector<T> Rs, Cs, tmp;
    for (const Block& bl : blocks_) {
      const int i0 = bl.i0, m = bl.i1 - bl.i0;
      if (i0 > 0) {  // off-diagonal: rows of the block against every earlier row
        Rs = scaled(R + size_t(i0) * K, bl.rowf, m, two_term_rows);
        Cs = scaled(Cl, bl.colf, i0);
        gemm(m, i0, K, T(1), Rs.data(), K, false, Cs.data(), K, true, T(0), out + size_t(i0) * n, n);
      }
      if (bl.pairwise) {
        for (int i = i0; i < bl.i1; ++i)
          for (int j = i0; j < (strict ? i : i + 1); ++j) {
            T s = T(0);
            for (int d = 0; d < K; ++d)
              s += R[size_t(i) * K + d] * Cl[size_t(j) * K + d] * std::exp(cd_.Gc(i, d) - cd_.Gc(j, d));
            out[size_t(i) * n + j] = s;
          }
        continue;
      }
      Rs = scaled(R + size_t(i0) * K, bl.up, m, two_term_rows);
      Cs = scaled(Cl + size_t(i0) * K, bl.dn, m);
      tmp.resize(size_t(m) * m);
      gemm(m, m, K, T(1), Rs.data(), K, false, Cs.data(), K, true, T(0), tmp.data(), m);
      for (int a = 0; a < m; ++a)
        for (int c = 0; c < m; ++c) {  // masked entries may be inf: select, never multiply
          const bool keep = strict ? a > c : a >= c;
          out[size_t(i0 + a) * n + i0 + c] = keep ? tmp[size_t(a) * m + c] : T(0);
        }
    }
  }

  // D^r [n, K] = Σ_j dM_ij Cl_j ⊙ e^{G_i − G_j}; dM [n, n] is zero off its mask.
  // two_term: the scaled Cl in two bf16 terms (∂P's, for ∂q; the kernels' grad_chunk).
  void contract_rows(const char* stage, const char* tag, const T* dM, const T* Cl, T* Dr, bool two_term = false) const {
    contract(stage, tag, false, dM, Cl, Dr, two_term);
  }
  // D^c [n, K] = Σ_i dM_ij R_i ⊙ e^{G_i − G_j}.
  void contract_cols(const char* stage, const char* tag, const T* dM, const T* R, T* Dc) const {
    contract(stage, tag, true, dM, R, Dc);
  }

  // R3 (§5): both contractions of ∂A with row factor b ⊙ k and column key k, recorded as the one
  // stacked (2n, K, n) product. Scalar gates: [M; Mᵀ Diag(β)] K with M = Γ^s ⊙ ∂A, a single GEMM.
  // Channel gates: the centred pair ∂A K̃_c, ∂Aᵀ K̂_c, block-decomposed as above.
  void contract_pair(const char* stage, const char* tag, const T* dA, T* Dr, T* Dc) const {
    record_gemm(stage, tag, 2 * n_, K_, n_);
    const int n = n_, K = K_;
    if (cd_.gk != GateKind::Channel) {
      const std::vector<T> M = masked_decay(dA);
      std::vector<T> L(size_t(2) * n * n), out(size_t(2) * n * K);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          L[size_t(i) * n + j] = M[size_t(i) * n + j];
          L[size_t(n + j) * n + i] = M[size_t(i) * n + j] * cd_.beta[i];
        }
      gemm(2 * n, K, n, T(1), L.data(), n, false, cd_.k.data(), K, false, T(0), out.data(), K);
      std::copy_n(out.data(), size_t(n) * K, Dr);
      std::copy_n(out.data() + size_t(n) * K, size_t(n) * K, Dc);
      return;
    }
    std::vector<T> bk(size_t(n) * K);
    for (size_t i = 0; i < bk.size(); ++i) bk[i] = cd_.erase[i] * cd_.k[i];
    channel_contract(false, dA, cd_.k.data(), Dr);
    channel_contract(true, dA, bk.data(), Dc);
  }

 private:
  void contract(const char* stage, const char* tag, bool cols, const T* dM, const T* X, T* D,
                bool two_term = false) const {
    record_gemm(stage, tag, n_, K_, n_);
    if (cd_.gk == GateKind::Channel) return channel_contract(cols, dM, X, D, two_term);
    const std::vector<T> M = masked_decay(dM);
    gemm(n_, K_, n_, T(1), M.data(), n_, cols, X, K_, false, T(0), D, K_);
  }

  struct Block {
    int i0 = 0, i1 = 0;      // rows [i0, i1) of the chunk
    bool pairwise = false;   // span/2 > kMaxCentredExponent in some channel
    std::vector<T> rowf;     // e^{G_i − r}, i in the block, r = G_{i0}: [i1 − i0, K], <= 1
    std::vector<T> colf;     // e^{r − G_j}, j < i0: [i0, K], <= 1
    std::vector<T> up, dn;   // e^{G_i − c}, e^{c − G_i} with the mid-range centre c: [i1 − i0, K]
  };

  T decay(int i, int j) const {  // scalar gates, i >= j only
    return cd_.gk == GateKind::Scalar ? std::exp(cd_.G[size_t(i)] - cd_.G[size_t(j)]) : T(1);
  }

  // M = select(i >= j, e^{G_i − G_j} dM_ij, 0) for scalar gates (dM itself for DeltaNet).
  std::vector<T> masked_decay(const T* dM) const {
    std::vector<T> M(size_t(n_) * n_, T(0));
    for (int i = 0; i < n_; ++i)
      for (int j = 0; j <= i; ++j) M[size_t(i) * n_ + j] = dM[size_t(i) * n_ + j] * decay(i, j);
    return M;
  }

  std::vector<T> scaled(const T* X, const std::vector<T>& f, int rows, bool two_term = false) const {
    std::vector<T> r(size_t(rows) * K_);
    for (size_t i = 0; i < r.size(); ++i) r[i] = X[i] * f[i];
    if (two_term)
      round_bf16_two_terms_if(round_, r);
    else
      round_bf16_if(round_, r);
    return r;
  }

  void build_blocks() {
    const int K = K_;
    for (int i0 = 0; i0 < n_; i0 += kSubChunk) {
      Block bl;
      bl.i0 = i0, bl.i1 = std::min(n_, i0 + kSubChunk);
      const int m = bl.i1 - i0;
      bl.rowf.resize(size_t(m) * K), bl.colf.resize(size_t(i0) * K);
      for (int d = 0; d < K; ++d) {
        const T r = cd_.Gc(i0, d);
        for (int i = i0; i < bl.i1; ++i) bl.rowf[size_t(i - i0) * K + d] = std::exp(cd_.Gc(i, d) - r);
        for (int j = 0; j < i0; ++j) bl.colf[size_t(j) * K + d] = std::exp(r - cd_.Gc(j, d));
      }
      std::vector<T> c(static_cast<size_t>(K));
      for (int d = 0; d < K; ++d) {
        T hi = cd_.Gc(i0, d), lo = hi;
        for (int i = i0; i < bl.i1; ++i) hi = std::max(hi, cd_.Gc(i, d)), lo = std::min(lo, cd_.Gc(i, d));
        c[d] = (hi + lo) / 2;
        if ((hi - lo) / 2 > T(kMaxCentredExponent)) bl.pairwise = true;
      }
      if (bl.pairwise) {
        record_pairwise_block();
      } else {
        bl.up.resize(size_t(m) * K), bl.dn.resize(size_t(m) * K);
        for (int i = i0; i < bl.i1; ++i)
          for (int d = 0; d < K; ++d) {
            bl.up[size_t(i - i0) * K + d] = std::exp(cd_.Gc(i, d) - c[d]);
            bl.dn[size_t(i - i0) * K + d] = std::exp(c[d] - cd_.Gc(i, d));
          }
      }
      blocks_.push_back(std::move(bl));
    }
  }

  // D [rows, K] += f_out ⊙ (op(dM block) · (X ⊙ f_in)), op = transpose when `t`: one block term of
  // a contraction, with its two bounded factor sets.
  void block_term(const T* dMb, bool t, int rows, int inner, const T* X, const std::vector<T>& f_in,
                  const std::vector<T>& f_out, T* D, bool two_term = false) const {
    const std::vector<T> Xs = scaled(X, f_in, inner, two_term);
    std::vector<T> tmp(size_t(rows) * K_);
    gemm(rows, K_, inner, T(1), dMb, n_, t, Xs.data(), K_, false, T(0), tmp.data(), K_);
    for (size_t x = 0; x < tmp.size(); ++x) D[x] += f_out[x] * tmp[x];
  }

  // cols == false: D^r = Σ_j dM_ij X_j ⊙ e^{G_i − G_j}; cols == true: D^c = Σ_i dM_ij X_i ⊙ e^{G_i − G_j}.
  void channel_contract(bool cols, const T* dM, const T* X, T* D, bool two_term = false) const {
    const int n = n_, K = K_;
    std::fill_n(D, size_t(n) * K, T(0));
    for (const Block& bl : blocks_) {
      const int i0 = bl.i0, m = bl.i1 - bl.i0;
      const T* off = dM + size_t(i0) * n;  // dM[I, 0:i0]
      const T* diag = off + i0;            // dM[I, I]
      if (i0 > 0) {
        if (cols)
          block_term(off, true, i0, m, X + size_t(i0) * K, bl.rowf, bl.colf, D, two_term);
        else
          block_term(off, false, m, i0, X, bl.colf, bl.rowf, D + size_t(i0) * K, two_term);
      }
      if (!bl.pairwise) {
        if (cols)
          block_term(diag, true, m, m, X + size_t(i0) * K, bl.up, bl.dn, D + size_t(i0) * K, two_term);
        else
          block_term(diag, false, m, m, X + size_t(i0) * K, bl.dn, bl.up, D + size_t(i0) * K, two_term);
        continue;
      }
      for (int i = i0; i < bl.i1; ++i)  // pairwise: every factor e^{G_i − G_j} <= 1
        for (int j = i0; j <= i; ++j) {
          const int src = cols ? i : j, dst = cols ? j : i;
          for (int d = 0; d < K; ++d)
            D[size_t(dst) * K + d] +=
                dM[size_t(i) * n + j] * X[size_t(src) * K + d] * std::exp(cd_.Gc(i, d) - cd_.Gc(j, d));
        }
    }
  }

  const ChunkData<T>& cd_;
  int n_, K_;
  bool round_;
  std::vector<Block> blocks_;
};

// 𝒯 = (I + A)^-1 for strictly lower A [n, n], by forward substitution (§2.1; a solve, not a product).
template <typename T>
std::vector<T> unit_lower_inverse(const std::vector<T>& A, int n) {
  std::vector<T> Ti(size_t(n) * n, T(0));
  for (int i = 0; i < n; ++i) {
    T* row = &Ti[size_t(i) * n];
    row[i] = T(1);
    for (int j = 0; j < i; ++j) {  // row_i −= A_ij · row_j (row_j is zero past j)
      const T a = A[size_t(i) * n + j];
      const T* rj = &Ti[size_t(j) * n];
      for (int c = 0; c <= j; ++c) row[c] -= a * rj[c];
    }
  }
  return Ti;
}

// The WY backward: from ∂X = [∂W | ∂U] [n, KV] to ∂Y [n, KV] and ∂A [n, n] (strictly lower).
//   ReWY (§5):     R1 R = 𝒯ᵀ∂X;  R2 ∂A = −stril(R Xᵀ);  ∂Y = R.
//   Baseline (§4): B1 ∂𝒯 = stril(∂X Yᵀ);  B2 ∂Y = 𝒯ᵀ∂X;  B3 Z = ∂𝒯 𝒯ᵀ;  B4 ∂A = −stril(𝒯ᵀ Z).
// ∂Y and ∂A are rounded to bf16 before the key contractions when `round`. rw_state: the chunk's
// H [K][V] where R_W is formed from R_U (rewy_rw_from_ru), else nullptr; K: the key columns of the
// KV = K + V. e_rows: the chunk's E [n][V] where ∂A is formed as −stril(R_U Eᵀ) (rewy_da_from_e; equal
// to −stril(R Xᵀ) since R_W = −R_U Hᵀ and E = U − WH), else nullptr.
template <typename T>
void wy_backward(BackwardAlgo algo, int n, int KV, const T* Tinv, const T* X, const T* Y, const T* dX, T* dY,
                 T* dA, bool round, const T* rw_state, int K, const T* e_rows = nullptr) {
  REWY_CHECK(K > 0 && K < KV, "wy_backward: K = {} must split KV = {} into [W | U]", K, KV);
  const char* st = "wy";
  auto stril = [n](T* M, T sign) {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) M[size_t(i) * n + j] = j < i ? sign * M[size_t(i) * n + j] : T(0);
  };
  if (algo == BackwardAlgo::ReWY) {
    local_gemm(st, "R1", n, KV, n, T(1), Tinv, n, true, dX, KV, false, T(0), dY, KV);
    round_bf16_if(round, dY, size_t(n) * KV);
    // rw_state (the bf16 twin of the CUDA kernels that do so, H [K][V]; chunk.cpp's rw_from_ru):
    // R_W = 𝒯ᵀ∂W, with ∂W = −∂E Hᵀ, formed as −R_U Hᵀ from the rounded R_U, where they round.
    if (rw_state) {
      const int V = KV - K;
      local_gemm(st, "R1w", n, K, V, T(-1), dY + K, KV, false, rw_state, V, true, T(0), dY, KV);
      for (int i = 0; i < n; ++i) round_bf16_if(round, dY + size_t(i) * KV, size_t(K));
    }
    if (e_rows)
      local_gemm(st, "R2e", n, n, KV - K, T(1), dY + K, KV, false, e_rows, KV - K, true, T(0), dA, n);
    else
      local_gemm(st, "R2", n, n, KV, T(1), dY, KV, false, X, KV, true, T(0), dA, n);
    stril(dA, T(-1));  // the diagonal of R Xᵀ is not zero (§10.1)
  } else {
    std::vector<T> dT(size_t(n) * n), Z(size_t(n) * n);
    local_gemm(st, "B1", n, n, KV, T(1), dX, KV, false, Y, KV, true, T(0), dT.data(), n);
    stril(dT.data(), T(1));  // exact: only ∂𝒯_ab with a > b reach stril(∂A) (§4)
    local_gemm(st, "B2", n, KV, n, T(1), Tinv, n, true, dX, KV, false, T(0), dY, KV);
    round_bf16_if(round, dY, size_t(n) * KV);
    local_gemm(st, "B3", n, n, n, T(1), dT.data(), n, false, Tinv, n, true, T(0), Z.data(), n);
    local_gemm(st, "B4", n, n, n, T(1), Tinv, n, true, Z.data(), n, false, T(0), dA, n);
    stril(dA, T(-1));  // §10.12
  }
  round_bf16_if(round, dA, size_t(n) * n);
}

}  // namespace rewy::delta::cpu
