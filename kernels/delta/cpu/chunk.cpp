#include "kernels/delta/cpu/chunk.h"

#include "kernels/delta/cpu/chunk_ops.h"
#include "kernels/delta/rw_from_ru.h"

namespace rewy::delta::cpu {

namespace {

// A contiguous host copy of t, rounded to bf16 when `round` (the inputs of a bf16 pipeline).
template <typename T>
Tensor prepared(const Tensor& t, bool round) {
  if (!t.defined()) return t;
  Tensor c = round ? t.clone() : t.contiguous();
  round_bf16_if(round, c.data<T>(), size_t(c.numel()));
  return c;
}

template <typename T>
T* ptr(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

// The inputs as the chunk code reads them; keeps the copies alive.
template <typename T>
struct Prepared {
  Tensor q, k, v, beta, g, b, w, h0;
  Problem<T> p;

  Prepared(const Config& cfg, const Inputs& in, const Dims& dims) {
    const bool r = cfg.round_to_bf16;
    q = prepared<T>(in.q, r), k = prepared<T>(in.k, r), v = prepared<T>(in.v, r);
    beta = prepared<T>(in.beta, r), b = prepared<T>(in.b, r), w = prepared<T>(in.w, r);
    g = prepared<T>(in.g, false), h0 = prepared<T>(in.h0, false);  // gates and states stay f32
    p.variant = cfg.variant, p.gk = gate_kind(cfg.variant);
    p.H = int(dims.H), p.K = int(dims.K), p.V = int(dims.V), p.C = cfg.chunk;
    p.scale = T(cfg.scale != 0.0 ? cfg.scale : 1.0 / std::sqrt(double(dims.K)));
    p.round = r;
    p.dk_state = cfg.dk_state_term == DkStateTerm::On;
    p.q = ptr<T>(q), p.k = ptr<T>(k), p.v = ptr<T>(v), p.beta = ptr<T>(beta), p.g = ptr<T>(g);
    p.b = ptr<T>(b), p.w = ptr<T>(w);
  }
};

// Where the per-chunk quantities live, in the Saved layouts (null: not kept).
template <typename T>
struct Stash {
  T* G = nullptr;     // [B*T, H] or [B*T, H, K]
  T* Tinv = nullptr;  // [B*T, H, C]
  T* W = nullptr;     // [B*T, H, K]
  T* U = nullptr;     // [B*T, H, V]
  T* E = nullptr;     // [B*T, H, V]
  T* P = nullptr;     // [B*T, H, C]
  T* Hs = nullptr;    // [num_chunks, H, K, V]
};

template <typename T>
std::vector<T> hadamard(const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<T> r(a.size());
  for (size_t i = 0; i < a.size(); ++i) r[i] = a[i] * b[i];
  return r;
}

// The chunk loop of one (sequence n, head h), §2. Forward: computes G and 𝒯 into st (always kept)
// and the output; replay (the Recompute backward): reads G and 𝒯 and rebuilds W, U, E, P and the
// states with the same arithmetic. W, U, E, P, Hs go to st where non-null; o, ht where non-null.
template <typename T>
void state_pass(const Problem<T>& p, const Dims& dims, int64_t n, int h, int64_t chunk0, const T* h0, bool replay,
                const Stash<T>& st, T* o, T* ht) {
  const int H = p.H, K = p.K, V = p.V, C = p.C, KV = K + V;
  const char* stage = replay ? "replay" : "fwd";
  std::vector<T> S(size_t(K) * V, T(0));  // the state entering the chunk (f32 recurrence)
  if (h0) std::copy_n(h0 + (n * H + h) * int64_t(K) * V, K * V, S.data());
  ChunkData<T> cd;
  const int64_t s1 = dims.seq_start[n + 1];
  int64_t c = chunk0;
  for (int64_t t0 = dims.seq_start[n]; t0 < s1; t0 += C, ++c) {
    const int m = int(std::min<int64_t>(C, s1 - t0));
    if (!replay && p.gk != GateKind::None) gate_cumsum(p, t0, m, h, st.G);
    cd.load(p, t0, m, h, st.G);
    const Gating<T> gt(cd, p.round);

    std::vector<T> Ti(size_t(m) * m);
    if (replay) {
      load_square(st.Tinv, t0, m, H, h, C, Ti.data());
    } else {  // A = stril(K̂ K̃ᵀ), 𝒯 = (I + A)^-1
      std::vector<T> A(size_t(m) * m);
      gt.product(stage, "A", true, hadamard(cd.erase, cd.k).data(), cd.k.data(), A.data());
      Ti = unit_lower_inverse(A, m);
      round_bf16_if(p.round, Ti);
      store_square(st.Tinv, t0, m, H, h, C, Ti.data());
    }
    // X = [W | U] = 𝒯 Y
    std::vector<T> Y = cd.wy_rhs();
    round_bf16_if(p.round, Y);
    std::vector<T> X(size_t(m) * KV);
    local_gemm(stage, "X", m, KV, m, T(1), Ti.data(), m, false, Y.data(), KV, false, T(0), X.data(), KV);
    round_bf16_if(p.round, X);
    if (st.W)
      for (int i = 0; i < m; ++i) {
        std::copy_n(&X[size_t(i) * KV], K, st.W + ((t0 + i) * H + h) * int64_t(K));
        std::copy_n(&X[size_t(i) * KV + K], V, st.U + ((t0 + i) * H + h) * int64_t(V));
      }
    if (st.Hs) std::copy(S.begin(), S.end(), st.Hs + (c * H + h) * int64_t(K) * V);
    std::vector<T> Hr = S;  // the state snapshot as a product operand
    round_bf16_if(p.round, Hr);

    // E = U − W H ("v_new")
    std::vector<T> E(size_t(m) * V);
    for (int i = 0; i < m; ++i) std::copy_n(&X[size_t(i) * KV + K], V, &E[size_t(i) * V]);
    local_gemm(stage, "WH", m, V, K, T(-1), X.data(), KV, false, Hr.data(), V, false, T(1), E.data(), V);
    round_bf16_if(p.round, E);
    if (st.E) scatter_rows(st.E, t0, m, H, h, V, E.data());

    // P = tril(Q̂ K̃ᵀ), with the diagonal (o_t reads S_t)
    std::vector<T> P(size_t(m) * m);
    gt.product(stage, "P", false, cd.q.data(), cd.k.data(), P.data(), /*two_term_rows=*/true);
    round_bf16_if(p.round, P);
    if (st.P) store_square(st.P, t0, m, H, h, C, P.data());

    if (o) {  // O = s (Q̂ H + P E)
      std::vector<T> Qh = hadamard(cd.q, cd.gam);
      round_bf16_if(p.round, Qh);
      std::vector<T> O(size_t(m) * V);
      local_gemm(stage, "QH", m, V, K, p.scale, Qh.data(), K, false, Hr.data(), V, false, T(0), O.data(), V);
      local_gemm(stage, "PE", m, V, m, p.scale, P.data(), m, false, E.data(), V, false, T(1), O.data(), V);
      scatter_rows(o, t0, m, H, h, V, O.data());
    }
    // H⁺ = Diag(e^γ) H + K̄ᵀ E
    for (int d = 0; d < K; ++d)
      for (int j = 0; j < V; ++j) S[size_t(d) * V + j] *= cd.glast[d];
    std::vector<T> Kb = hadamard(cd.k, cd.gbar);
    round_bf16_if(p.round, Kb);
    local_gemm(stage, "KE", K, V, m, T(1), Kb.data(), K, true, E.data(), V, false, T(1), S.data(), V);
  }
  if (ht) std::copy(S.begin(), S.end(), ht + (n * H + h) * int64_t(K) * V);
}

// Gradient outputs in the flattened layout (null: not produced).
template <typename T>
struct GradOut {
  T *dq = nullptr, *dk = nullptr, *dv = nullptr;  // [B*T, H, K|V]
  T *dbeta = nullptr, *db = nullptr, *dw = nullptr;
  T *dg = nullptr;                                 // [B*T, H] or [B*T, H, K]
  T *dh0 = nullptr;                                // [N, H, K, V]
};

// The reverse chunk loop of one (sequence n, head h): §3, the WY part (§4/§5), §7.1/§8.
template <typename T>
void backward_pass(const Problem<T>& p, BackwardAlgo algo, const Dims& dims, int64_t n, int h, int64_t chunk0,
                   const Stash<T>& st, const T* dO, const T* dht, const GradOut<T>& out) {
  const int H = p.H, K = p.K, V = p.V, C = p.C, KV = K + V;
  const bool gated = p.gk != GateKind::None;
  const int Dg = p.gk == GateKind::Channel ? K : 1;
  const bool gram = algo == BackwardAlgo::Baseline && p.gk == GateKind::Scalar;  // FLA's B5 path for GDN
  const T s = p.scale;
  std::vector<T> dHp(size_t(K) * V, T(0));  // ∂H⁺, the f32 recurrence
  if (dht) std::copy_n(dht + (n * H + h) * int64_t(K) * V, K * V, dHp.data());
  const int64_t s0 = dims.seq_start[n], s1 = dims.seq_start[n + 1];
  const int64_t nch = (s1 - s0 + C - 1) / C;
  ChunkData<T> cd;
  for (int64_t c = nch - 1; c >= 0; --c) {
    const int64_t t0 = s0 + c * C;
    const int m = int(std::min<int64_t>(C, s1 - t0));
    cd.load(p, t0, m, h, st.G);
    const Gating<T> gt(cd, p.round);
    std::vector<T> Ti(size_t(m) * m), X(size_t(m) * KV), E(size_t(m) * V), P(size_t(m) * m), dOc(size_t(m) * V);
    load_square(st.Tinv, t0, m, H, h, C, Ti.data());
    load_square(st.P, t0, m, H, h, C, P.data());
    for (int i = 0; i < m; ++i) {
      std::copy_n(st.W + ((t0 + i) * H + h) * int64_t(K), K, &X[size_t(i) * KV]);
      std::copy_n(st.U + ((t0 + i) * H + h) * int64_t(V), V, &X[size_t(i) * KV + K]);
    }
    gather_rows(st.E, t0, m, H, h, V, E.data());
    gather_rows(dO, t0, m, H, h, V, dOc.data());
    const T* Hc = st.Hs + ((chunk0 + c) * H + h) * int64_t(K) * V;
    std::vector<T> Hr(Hc, Hc + size_t(K) * V), dHr = dHp;  // snapshots as product operands
    round_bf16_if(p.round, Hr);
    round_bf16_if(p.round, dHr);
    std::vector<T> Y = cd.wy_rhs(), Qh = hadamard(cd.q, cd.gam), Kb = hadamard(cd.k, cd.gbar);
    std::vector<T> Qh2 = Qh;  // ∂H's operand: Q̂ as two bf16 terms, as the kernels
    round_bf16_two_terms_if(p.round, Qh2);
    // ∂E's K̄ ∂H⁺: a bf16 K̄ operand for channel gates; scalar gates (and DeltaNet, K̄ = K) scale the
    // rows of K ∂H⁺ by e^{γ−G} in fp32, so K̄ is not rounded there.
    std::vector<T> KbE = Kb;
    round_bf16_if(p.round && p.gk == GateKind::Channel, KbE);
    for (auto* x : {&Y, &Qh, &Kb}) round_bf16_if(p.round, *x);  // GEMM operands of the kernels

    // §3: ∂E = s Pᵀ∂O + K̄ ∂H⁺, ∂P = s tril(∂O Eᵀ), ∂Q̂ = s ∂O Hᵀ, ∂K̄ = E ∂H⁺ᵀ, ∂X = [−∂E Hᵀ | ∂E]
    std::vector<T> dE(size_t(m) * V), dP(size_t(m) * m), dQh(size_t(m) * K), dKb(size_t(m) * K);
    std::vector<T> dX(size_t(m) * KV);
    local_gemm("bwd", "dE_intra", m, V, m, s, P.data(), m, true, dOc.data(), V, false, T(0), dE.data(), V);
    local_gemm("bwd", "dE_state", m, V, K, T(1), KbE.data(), K, false, dHr.data(), V, false, T(1), dE.data(), V);
    round_bf16_if(p.round, dE);
    local_gemm("bwd", "dP", m, m, V, s, dOc.data(), V, false, E.data(), V, true, T(0), dP.data(), m);
    // The diagonal of ∂P (decay factor 1) goes straight to ∂q, ∂k; its two ∂G terms cancel exactly,
    // and leaving them out of the contractions keeps ∂G free of that O(1) cancellation.
    std::vector<T> dPdiag(static_cast<size_t>(m));
    for (int i = 0; i < m; ++i) {
      dPdiag[i] = dP[size_t(i) * m + i];
      for (int j = i; j < m; ++j) dP[size_t(i) * m + j] = T(0);
    }
    round_bf16_if(p.round, dP);
    local_gemm("bwd", "dQ_state", m, K, V, s, dOc.data(), V, false, Hr.data(), V, true, T(0), dQh.data(), K);
    if (p.round && p.dk_state && algo == BackwardAlgo::ReWY && rewy_dk_state_term(p.variant, K, V)) {
      // The kernels' ∂K̄ state term (Config::dk_state_term On): state_bwd's bf16 ∂H⁺ᵀ/s tile times
      // E, times s, stored as bf16 for grad_chunk.
      std::vector<T> dHf = dHp;
      for (T& x : dHf) x *= T(1) / s;
      round_bf16_if(true, dHf);
      local_gemm("bwd", "dKbar", m, K, V, s, E.data(), V, false, dHf.data(), V, true, T(0), dKb.data(), K);
      round_bf16_if(true, dKb);
    } else {
      local_gemm("bwd", "dKbar", m, K, V, T(1), E.data(), V, false, dHr.data(), V, true, T(0), dKb.data(), K);
    }
    local_gemm("bwd", "dW", m, K, V, T(-1), dE.data(), V, false, Hr.data(), V, true, T(0), dX.data(), KV);
    for (int i = 0; i < m; ++i) {
      round_bf16_if(p.round, &dX[size_t(i) * KV], size_t(K));  // ∂W, a GEMM operand of the kernels
      std::copy_n(&dE[size_t(i) * V], V, &dX[size_t(i) * KV + K]);
    }
    std::vector<T> dlast(size_t(K), T(0));  // ∂γ through Diag(e^γ) H: e^γ ⊙ Σ_v H ⊙ ∂H⁺
    for (int d = 0; d < K; ++d) {
      for (int j = 0; j < V; ++j) dlast[d] += Hr[size_t(d) * V + j] * dHr[size_t(d) * V + j];
      dlast[d] *= cd.glast[d];
    }
    // ∂H = Diag(e^γ) ∂H⁺ + s Q̂ᵀ ∂O − Wᵀ ∂E, the state cotangent entering the previous chunk
    for (int d = 0; d < K; ++d)
      for (int j = 0; j < V; ++j) dHp[size_t(d) * V + j] *= cd.glast[d];
    local_gemm("bwd", "dH_out", K, V, m, s, Qh2.data(), K, true, dOc.data(), V, false, T(1), dHp.data(), V);
    local_gemm("bwd", "dH_wy", K, V, m, T(-1), X.data(), KV, true, dE.data(), V, false, T(1), dHp.data(), V);

    // WY part: ∂Y = [R_W | R_U], ∂A; then the key contractions D^r (row factor b⊙k), D^c (column key)
    std::vector<T> dY(size_t(m) * KV), dA(size_t(m) * m), Dr(size_t(m) * K), Dc(size_t(m) * K);
    // The twin of the ReWY kernels that form R_W from R_U (wy_backward's rw_state) and ∂A from E (e_rows).
    const bool rw_from_ru = p.round && algo == BackwardAlgo::ReWY && rewy_rw_from_ru(p.variant, K, V);
    const bool da_from_e = p.round && algo == BackwardAlgo::ReWY && rewy_da_from_e(p.variant, K, V);
    wy_backward(algo, m, KV, Ti.data(), X.data(), Y.data(), dX.data(), dY.data(), dA.data(), p.round,
                rw_from_ru ? Hr.data() : nullptr, K, da_from_e ? E.data() : nullptr);
    std::vector<T> gram_dG;
    if (algo == BackwardAlgo::ReWY) {
      gt.contract_pair("wy", "R3", dA.data(), Dr.data(), Dc.data());
    } else {
      if (gram) {  // ∂G_i += Σ_j (M ⊙ A⁰)_ij − Σ_j (M ⊙ A⁰)_ji, A⁰_ij = β_i k_i·k_j, M = Γ^s ⊙ ∂A
        std::vector<T> Gr(size_t(m) * m);
        local_gemm("wy", "B5", m, m, K, T(1), cd.k.data(), K, false, cd.k.data(), K, true, T(0), Gr.data(), m);
        gram_dG.assign(size_t(m), T(0));
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < i; ++j) {
            const T x = dA[size_t(i) * m + j] * std::exp(cd.G[i] - cd.G[j]) * cd.beta[i] * Gr[size_t(i) * m + j];
            gram_dG[i] += x;
            gram_dG[j] -= x;
          }
      }
      gt.contract_rows("wy", "B6", dA.data(), cd.k.data(), Dr.data());
      gt.contract_cols("wy", "B7", dA.data(), hadamard(cd.erase, cd.k).data(), Dc.data());
    }
    // Output side: D^r_P (∂q), D^c_P (∂k) of ∂P with row factor q and column key k
    std::vector<T> DrP(size_t(m) * K), DcP(size_t(m) * K);
    gt.contract_rows("bwd", "dP_rows", dP.data(), cd.k.data(), DrP.data(), /*two_term=*/true);
    gt.contract_cols("bwd", "dP_cols", dP.data(), cd.q.data(), DcP.data());

    // §8, elementwise. dbk is the gradient of the row factor b ⊙ k; ∂G from the key products (§7.1).
    std::vector<T> dG(size_t(m) * Dg, T(0));
    for (int i = 0; i < m; ++i) {
      const int64_t row = (t0 + i) * H + h;
      T dbeta = T(0);
      for (int d = 0; d < K; ++d) {
        const size_t o = size_t(i) * K + d;
        const T RW = dY[size_t(i) * KV + d];
        const T dbk = cd.gam[o] * RW + Dr[o];
        out.dq[row * K + d] = cd.gam[o] * dQh[o] + DrP[o] + dPdiag[i] * cd.k[o];
        out.dk[row * K + d] = DcP[o] + dPdiag[i] * cd.q[o] + cd.gbar[o] * dKb[o] + cd.erase[o] * dbk + Dc[o];
        const T db = cd.k[o] * dbk;
        if (out.db) out.db[row * K + d] = db;
        dbeta += db;
        if (gated) {
          const T bk = cd.erase[o] * cd.k[o];
          T x = Qh[o] * dQh[o] + cd.q[o] * DrP[o] - cd.k[o] * DcP[o] + bk * cd.gam[o] * RW;
          if (!gram) x += bk * Dr[o] - cd.k[o] * Dc[o];
          dG[size_t(i) * Dg + (Dg == 1 ? 0 : d)] += x;
        }
      }
      for (int j = 0; j < V; ++j) {
        const T RU = dY[size_t(i) * KV + K + j];
        out.dv[row * V + j] = cd.write[size_t(i) * V + j] * RU;
        const T dw = cd.v[size_t(i) * V + j] * RU;
        if (out.dw) out.dw[row * V + j] = dw;
        dbeta += dw;
      }
      if (out.dbeta) out.dbeta[row] = dbeta;  // β is the erase and the write gate: no division by β
      if (gram) dG[size_t(i)] += gram_dG[i];
    }
    if (gated) {
      // γ = G at the last row, through Diag(e^γ) H
      for (int d = 0; d < K; ++d) dG[size_t(m - 1) * Dg + (Dg == 1 ? 0 : d)] += dlast[d];
      // G restarts per chunk: ∂g_t = Σ_{i >= t in the chunk} ∂G_i. K̄_j = k_j e^{γ − G_j} depends on
      // g_t for t > j only: its part, −K̄_i ∂K̄_i per row and Σ_j K̄_j ∂K̄_j on the last row (§8), sums to
      // the exclusive prefix Σ_{j < t} K̄_j ∂K̄_j, added as such (the §8 form cancels O(1) terms).
      std::vector<T> pre(static_cast<size_t>(Dg), T(0));
      for (int i = 0; i < m; ++i) {
        for (int d = 0; d < Dg; ++d) out.dg[((t0 + i) * H + h) * int64_t(Dg) + d] = pre[d];
        for (int d = 0; d < K; ++d) pre[Dg == 1 ? 0 : d] += Kb[size_t(i) * K + d] * dKb[size_t(i) * K + d];
      }
      for (int d = 0; d < Dg; ++d) {
        T acc = T(0);
        for (int i = m - 1; i >= 0; --i) {
          acc += dG[size_t(i) * Dg + d];
          out.dg[((t0 + i) * H + h) * int64_t(Dg) + d] += acc;
        }
      }
    }
  }
  if (out.dh0) std::copy(dHp.begin(), dHp.end(), out.dh0 + (n * H + h) * int64_t(K) * V);
}

Shape gate_shape(const Dims& d, GateKind gk) {
  return gk == GateKind::Channel ? Shape{d.B, d.T, d.H, d.K} : Shape{d.B, d.T, d.H};
}

}  // namespace

template <typename T>
ForwardResult chunk_forward(const Config& cfg, const Inputs& in, const Dims& dims) {
  const Prepared<T> pr(cfg, in, dims);
  const Problem<T>& p = pr.p;
  const DType dt = dtype_of<T>::value;
  ForwardResult r;
  Saved& sv = r.saved;
  sv.policy = cfg.policy;
  if (p.gk != GateKind::None) sv.G = Tensor::empty(gate_shape(dims, p.gk), dt);
  sv.Tinv = Tensor::empty({dims.B, dims.T, dims.H, int64_t(p.C)}, dt);
  if (cfg.policy == Policy::Save) {
    sv.W = Tensor::empty(in.k.shape(), dt), sv.U = Tensor::empty(in.v.shape(), dt);
    sv.E = Tensor::empty(in.v.shape(), dt), sv.P = Tensor::empty(sv.Tinv.shape(), dt);
    sv.Hs = Tensor::empty({dims.num_chunks(p.C), dims.H, dims.K, dims.V}, dt);
  }
  r.o = Tensor::empty(in.v.shape(), dt);
  if (cfg.output_final_state) r.ht = Tensor::empty({dims.N, dims.H, dims.K, dims.V}, dt);
  const Stash<T> st{ptr<T>(sv.G), ptr<T>(sv.Tinv), ptr<T>(sv.W), ptr<T>(sv.U),
                    ptr<T>(sv.E), ptr<T>(sv.P),    ptr<T>(sv.Hs)};
  const std::vector<int64_t> chunk0 = dims.chunk_start(p.C);
  for (int64_t n = 0; n < dims.N; ++n)
    for (int h = 0; h < p.H; ++h)
      state_pass(p, dims, n, h, chunk0[n], ptr<T>(pr.h0), false, st, r.o.data<T>(), ptr<T>(r.ht));
  round_bf16_if(p.round, r.o.data<T>(), size_t(r.o.numel()));
  return r;
}

template <typename T>
Grads chunk_backward(const Config& cfg, const Inputs& in, const Dims& dims, const ForwardResult& fwd,
                     const Tensor& dout, const Tensor& dht) {
  const Prepared<T> pr(cfg, in, dims);
  const Problem<T>& p = pr.p;
  const DType dt = dtype_of<T>::value;
  const Tensor dO = prepared<T>(dout, p.round), dhT = prepared<T>(dht, false);
  const Saved& sv = fwd.saved;
  Stash<T> st;
  const Tensor G = sv.G.defined() ? sv.G.contiguous() : Tensor(), Ti = sv.Tinv.contiguous();
  st.G = ptr<T>(G), st.Tinv = ptr<T>(Ti);
  // Recompute: rebuild W, U, E, P and the states (same code as the forward, so the same values).
  Tensor W, U, E, P, Hs;
  if (cfg.policy == Policy::Save) {
    W = sv.W.contiguous(), U = sv.U.contiguous(), E = sv.E.contiguous(), P = sv.P.contiguous();
    Hs = sv.Hs.contiguous();
  } else {
    W = Tensor::empty(in.k.shape(), dt), U = Tensor::empty(in.v.shape(), dt), E = Tensor::empty(in.v.shape(), dt);
    P = Tensor::empty(sv.Tinv.shape(), dt), Hs = Tensor::empty({dims.num_chunks(p.C), dims.H, dims.K, dims.V}, dt);
  }
  st.W = W.data<T>(), st.U = U.data<T>(), st.E = E.data<T>(), st.P = P.data<T>(), st.Hs = Hs.data<T>();
  const std::vector<int64_t> chunk0 = dims.chunk_start(p.C);
  if (cfg.policy == Policy::Recompute)
    for (int64_t n = 0; n < dims.N; ++n)
      for (int h = 0; h < p.H; ++h) state_pass<T>(p, dims, n, h, chunk0[n], ptr<T>(pr.h0), true, st, nullptr, nullptr);

  Grads gr;
  gr.dq = Tensor::empty(in.q.shape(), dt), gr.dk = Tensor::empty(in.k.shape(), dt);
  gr.dv = Tensor::empty(in.v.shape(), dt);
  if (has_beta(cfg.variant)) {
    gr.dbeta = Tensor::empty(in.beta.shape(), dt);
  } else {
    gr.db = Tensor::empty(in.b.shape(), dt), gr.dw = Tensor::empty(in.w.shape(), dt);
  }
  if (p.gk != GateKind::None) gr.dg = Tensor::empty(in.g.shape(), dt);
  if (in.h0.defined()) gr.dh0 = Tensor::empty(in.h0.shape(), dt);
  const GradOut<T> out{ptr<T>(gr.dq), ptr<T>(gr.dk), ptr<T>(gr.dv), ptr<T>(gr.dbeta),
                       ptr<T>(gr.db), ptr<T>(gr.dw), ptr<T>(gr.dg), ptr<T>(gr.dh0)};
  for (int64_t n = 0; n < dims.N; ++n)
    for (int h = 0; h < p.H; ++h)
      backward_pass(p, cfg.backward, dims, n, h, chunk0[n], st, dO.data<T>(), ptr<T>(dhT), out);
  for (Tensor* t : {&gr.dq, &gr.dk, &gr.dv, &gr.dbeta, &gr.db, &gr.dw})
    if (t->defined()) round_bf16_if(p.round, t->data<T>(), size_t(t->numel()));
  return gr;
}

template ForwardResult chunk_forward<float>(const Config&, const Inputs&, const Dims&);
template ForwardResult chunk_forward<double>(const Config&, const Inputs&, const Dims&);
template Grads chunk_backward<float>(const Config&, const Inputs&, const Dims&, const ForwardResult&, const Tensor&,
                                     const Tensor&);
template Grads chunk_backward<double>(const Config&, const Inputs&, const Dims&, const ForwardResult&,
                                      const Tensor&, const Tensor&);

}  // namespace rewy::delta::cpu
