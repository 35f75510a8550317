// Forward kernels of the chunkwise delta rule (§2), one template family for the four variants.
//
//   wy_prep      chunk-parallel  G, A (§2.1; channel gates through centred 16-row blocks, §6),
//                                𝒯 = (I + A)⁻¹ (fp32 forward substitution), W = 𝒯 Y_W, U = 𝒯 Y_U.
//                                In Recompute mode (backward) 𝒯 is read back and P is rebuilt too.
//   state_fwd    sequential      per (sequence, head, V-slice): E = U − W H, H ← e^γ H + K̄ᵀ E,
//                                stores the bf16 snapshot of H entering each chunk and E.
//   chunk_output chunk-parallel  P = tril(Q̂ K̃ᵀ), O = s (Q̂ H + P E).
#pragma once
#include "kernels/delta/cuda/common.cuh"

namespace rewy::delta::cuda_impl {

enum PrepMode : int { kPrepForward = 0, kPrepRecompute = 1 };

// ------------------------------------------------------------------------------------------------
// wy_prep

template <int VAR, int K, int V, int MODE>
struct PrepLayout {
  static constexpr int KP = K + 8, VP = V + 8;
  static constexpr bool kVec = VT<VAR>::vec_gate;
  static constexpr size_t tile_k = align16(size_t(kChunk) * KP * 2);
  static constexpr size_t ks = 0;                                                  // bf16 [C][KP] k
  static constexpr size_t qs = ks + tile_k;                                        // bf16 [C][KP] q (Recompute)
  static constexpr size_t Gs = qs + (MODE == kPrepRecompute ? tile_k : 0);          // f32 [C][K] or [C]
  static constexpr size_t betas = Gs + align16((kVec ? kChunk * K : kChunk) * 4);  // f32 [C]
  static constexpr size_t KR = betas + align16(kChunk * 4);                        // bf16 [C][KP] row operand, then Y_W
  static constexpr size_t R2 = KR + tile_k;  // packed KC; then Tb [C][CP] + (Ts f32 [C][C+1] | Y_U [C][VP])
  static constexpr size_t Tb = R2;
  static constexpr size_t Ts = R2 + align16(size_t(kChunk) * kCP * 2);
  static constexpr size_t YU = Ts;
  static constexpr size_t R2_bytes =
      cmax(kVec ? align16(size_t(kPackedRows) * KP * 2) : 0,
           align16(size_t(kChunk) * kCP * 2) + cmax(align16(size_t(kChunk) * (kChunk + 1) * 4), align16(size_t(kChunk) * VP * 2)));
  static constexpr size_t As = R2 + R2_bytes;  // f32 [C][C+1]
  static constexpr size_t total = As + (MODE == kPrepForward ? align16(size_t(kChunk) * (kChunk + 1) * 4) : 0);
};

// Ts = (I + As)⁻¹ for strictly lower As, both f32 [C][C+1]. Columns are independent: 4 lanes per
// column split the inner sum and reduce with shuffles, so no block barrier is needed.
__device__ __forceinline__ void solve_unit_lower(float* Ts, const float* As) {
  constexpr int LD = kChunk + 1;
  const int col = threadIdx.x >> 2, part = threadIdx.x & 3;
  for (int r = part; r < kChunk; r += 4) Ts[r * LD + col] = r == col ? 1.f : 0.f;
  __syncwarp();
  for (int i = 1; i < kChunk; ++i) {
    float s = 0.f;
    if (i > col)
      for (int j = col + part; j < i; j += 4) s += As[i * LD + j] * Ts[j * LD + col];
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    s += __shfl_xor_sync(0xffffffffu, s, 2);
    if (i > col && part == 0) Ts[i * LD + col] = -s;
    __syncwarp();
  }
}

// Coefficient of row i, channel d in Y_W = B ⊙ K ⊙ Γ (b = β for the β-variants).
template <int VAR, int K>
__device__ __forceinline__ float yw_coef(const DeltaParams& p, const float* betas, const float* Gs, int tok0, int len,
                                         int h, int i, int d) {
  if constexpr (VAR == kDeltaNet) return betas[i];
  else if constexpr (VAR == kGDN) return betas[i] * __expf(Gs[i]);
  else if constexpr (VAR == kKDA) return betas[i] * __expf(Gs[i * K + d]);
  else return i < len ? bf2f(p.b[(int64_t(tok0 + i) * p.H + h) * K + d]) * __expf(Gs[i * K + d]) : 0.f;
}

// P tile of this warp (masked, i >= j) from q, k and the gates; uses `rowbuf` and `packed` as
// scratch for channel gates.
template <int VAR, int K>
__device__ __forceinline__ void chunk_P_tile(float (&acc)[1][4][4], const bf16_t* qs, const bf16_t* ks, const float* Gs,
                                             bf16_t* rowbuf, bf16_t* packed) {
  if constexpr (VT<VAR>::vec_gate) {
    build_row_operand<K>(rowbuf, qs, Gs, [](int, int) { return 1.f; });
    build_packed_col_operand<K>(packed, ks, Gs);
    __syncthreads();
    gated_cc_product<VAR, K>(acc, rowbuf, packed);
  } else {
    gated_cc_product<VAR, K>(acc, qs, ks);
  }
  frag_for_each(acc, cc_m0(), cc_n0(),
                [&](int r, int c, float& x) { x = gated_entry<VAR, K>(x, Gs, r, c, r >= c); });
}

template <int VAR, int K, int V, int MODE>
__global__ void __launch_bounds__(kThreads) wy_prep_kernel(const DeltaParams p) {
  using L = PrepLayout<VAR, K, V, MODE>;
  constexpr int KP = L::KP, VP = L::VP;
  extern __shared__ __align__(16) char smem[];
  bf16_t* ks = reinterpret_cast<bf16_t*>(smem + L::ks);
  bf16_t* qs = reinterpret_cast<bf16_t*>(smem + L::qs);
  float* Gs = reinterpret_cast<float*>(smem + L::Gs);
  float* betas = reinterpret_cast<float*>(smem + L::betas);
  bf16_t* KR = reinterpret_cast<bf16_t*>(smem + L::KR);
  bf16_t* packed = reinterpret_cast<bf16_t*>(smem + L::R2);
  bf16_t* Tb = reinterpret_cast<bf16_t*>(smem + L::Tb);
  float* Ts = reinterpret_cast<float*>(smem + L::Ts);
  bf16_t* YU = reinterpret_cast<bf16_t*>(smem + L::YU);
  float* As = reinterpret_cast<float*>(smem + L::As);

  const int c = blockIdx.x, h = blockIdx.y;
  const int tok0 = p.chunk_tok[c], len = p.chunk_len[c];
  const int warp = threadIdx.x >> 5;
  const int64_t strideK = int64_t(p.H) * K, strideV = int64_t(p.H) * V;
  const int64_t baseK = (int64_t(tok0) * p.H + h) * K, baseV = (int64_t(tok0) * p.H + h) * V;

  load_tile<kChunk, K>(ks, KP, p.k + baseK, strideK, len);
  if constexpr (MODE == kPrepRecompute) load_tile<kChunk, K>(qs, KP, p.q + baseK, strideK, len);
  if (threadIdx.x < kChunk) {
    float bt = 0.f;
    if constexpr (VT<VAR>::has_beta)
      if (int(threadIdx.x) < len) bt = bf2f(p.beta[int64_t(tok0 + threadIdx.x) * p.H + h]);
    betas[threadIdx.x] = bt;
  }
  gate_cumsum<VAR, K>(Gs, p, tok0, len, h);
  __syncthreads();

  if constexpr (MODE == kPrepForward) {
    // A = stril(K̂ K̃ᵀ) with the row coefficient b (β) folded into the row operand.
    float acc[1][4][4];
    if constexpr (VT<VAR>::vec_gate) {
      check_gate_span<K>(Gs, p);
      build_row_operand<K>(KR, ks, Gs, [&](int i, int d) {
        if constexpr (VAR == kGDN2)
          return i < len ? bf2f(p.b[(int64_t(tok0 + i) * p.H + h) * K + d]) : 0.f;
        else
          return betas[i];
      });
      build_packed_col_operand<K>(packed, ks, Gs);
      __syncthreads();
      gated_cc_product<VAR, K>(acc, KR, packed);
      frag_for_each(acc, cc_m0(), cc_n0(), [&](int r, int cc, float& x) { As[r * (kChunk + 1) + cc] = r > cc ? x : 0.f; });
    } else {
      gated_cc_product<VAR, K>(acc, ks, ks);
      frag_for_each(acc, cc_m0(), cc_n0(), [&](int r, int cc, float& x) {
        As[r * (kChunk + 1) + cc] = betas[r] * gated_entry<VAR, K>(x, Gs, r, cc, r > cc);
      });
    }
    __syncthreads();
    solve_unit_lower(Ts, As);
    __syncthreads();
    for (int idx = threadIdx.x; idx < kChunk * kChunk; idx += kThreads) {
      const int r = idx / kChunk, cc = idx % kChunk;
      const bf16_t t = f2bf(Ts[r * (kChunk + 1) + cc]);
      Tb[r * kCP + cc] = t;
      if (r < len) p.Tinv[(int64_t(tok0 + r) * p.H + h) * kChunk + cc] = t;
    }
  } else {
    // Backward replay: rebuild P for the state and gradient kernels, then read 𝒯 back.
    float acc[1][4][4];
    chunk_P_tile<VAR, K>(acc, qs, ks, Gs, KR, packed);
    frag_store_global(acc, p.P + (int64_t(tok0) * p.H + h) * kChunk, int64_t(p.H) * kChunk, cc_m0(), cc_n0(), len);
    __syncthreads();
    load_tile<kChunk, kChunk>(Tb, kCP, p.Tinv + (int64_t(tok0) * p.H + h) * kChunk, int64_t(p.H) * kChunk, len);
  }

  // Y_W = B ⊙ K ⊙ Γ (into KR), Y_U = Ω ⊙ V.
  for (int idx = threadIdx.x; idx < kChunk * K; idx += kThreads) {
    const int i = idx / K, d = idx % K;
    KR[i * KP + d] = f2bf(yw_coef<VAR, K>(p, betas, Gs, tok0, len, h, i, d) * bf2f(ks[i * KP + d]));
  }
  __syncthreads();  // Ts (aliased by YU) is dead only now
  for (int idx = threadIdx.x; idx < kChunk * V; idx += kThreads) {
    const int i = idx / V, e = idx % V;
    float y = 0.f;
    if (i < len) {
      const float vi = bf2f(p.v[baseV + int64_t(i) * strideV + e]);
      if constexpr (VAR == kGDN2) y = bf2f(p.w[baseV + int64_t(i) * strideV + e]) * vi;
      else y = betas[i] * vi;
    }
    YU[i * VP + e] = f2bf(y);
  }
  __syncthreads();

  {  // W = 𝒯 Y_W
    constexpr int NT = K / 16;
    float acc[1][NT][4];
    frag_zero(acc);
    const int m0 = 16 * (warp & 3), n0 = (K / 2) * (warp >> 2);
    warp_mma<1, NT, Lay::RowMajor, Lay::RowMajor>(acc, Tb, kCP, KR, KP, m0, n0, 0, kChunk);
    frag_store_global(acc, p.W + baseK, strideK, m0, n0, len);
  }
  {  // U = 𝒯 Y_U
    constexpr int NT = V / 16;
    float acc[1][NT][4];
    frag_zero(acc);
    const int m0 = 16 * (warp & 3), n0 = (V / 2) * (warp >> 2);
    warp_mma<1, NT, Lay::RowMajor, Lay::RowMajor>(acc, Tb, kCP, YU, VP, m0, n0, 0, kChunk);
    frag_store_global(acc, p.U + baseV, strideV, m0, n0, len);
  }
}

// ------------------------------------------------------------------------------------------------
// Sequential state kernels share the decay preparation of a chunk: γ (per channel or scalar) and
// the scaled operands K̄ = K ⊙ e^{γ − G} and, optionally, Q̂ = α Q ⊙ Γ, computed in two passes
// over g without an f32 [C][K] buffer.

template <int VAR, int K, bool WITH_Q>
__device__ __forceinline__ void decay_operands(const DeltaParams& p, int tok0, int len, int h, bf16_t* Kb, bf16_t* Qh,
                                               float q_alpha, float* gam, float* Gsm) {
  constexpr int KP = K + 8;
  if constexpr (VT<VAR>::vec_gate) {
    for (int d = threadIdx.x; d < K; d += kThreads) {
      const float* src = p.g + (int64_t(tok0) * p.H + h) * K + d;
      float gamma = 0.f;
      for (int i = 0; i < len; ++i) gamma += src[int64_t(i) * p.H * K];
      float G = 0.f;
      for (int i = 0; i < kChunk; ++i) {
        if (i < len) G += src[int64_t(i) * p.H * K];
        Kb[i * KP + d] = f2bf(bf2f(Kb[i * KP + d]) * __expf(gamma - G));
        if constexpr (WITH_Q) Qh[i * KP + d] = f2bf(q_alpha * bf2f(Qh[i * KP + d]) * __expf(G));
      }
      gam[d] = __expf(gamma);
    }
  } else {
    if constexpr (VT<VAR>::scalar_gate) gate_cumsum<VAR, K>(Gsm, p, tok0, len, h);
    __syncthreads();
    const float gamma = VT<VAR>::scalar_gate ? Gsm[kChunk - 1] : 0.f;  // rows >= len continue flat
    for (int idx = threadIdx.x; idx < kChunk * K; idx += kThreads) {
      const int i = idx / K, d = idx % K;
      const float G = VT<VAR>::scalar_gate ? Gsm[i] : 0.f;
      if constexpr (VT<VAR>::scalar_gate) Kb[i * KP + d] = f2bf(bf2f(Kb[i * KP + d]) * __expf(gamma - G));
      if constexpr (WITH_Q) Qh[i * KP + d] = f2bf(q_alpha * bf2f(Qh[i * KP + d]) * __expf(G));
    }
    for (int d = threadIdx.x; d < K; d += kThreads) gam[d] = __expf(gamma);
  }
}

// Warp tile of the K×BV state: K = 128: warp w owns rows [16 w, +16), all BV columns;
// K = 64: rows [16 (w & 3), +16), columns [(BV / 2)(w >> 2), +BV / 2).
template <int K, int BV>
struct StateTile {
  static constexpr int NT = K == 128 ? BV / 8 : BV / 16;
  __device__ static int m0() { return K == 128 ? 16 * (threadIdx.x >> 5) : 16 * ((threadIdx.x >> 5) & 3); }
  __device__ static int n0() { return K == 128 ? 0 : (BV / 2) * (threadIdx.x >> 7); }
};

template <int K, int V, int BV>
struct StateLayout {
  static constexpr int KP = K + 8, BVP = BV + 8;
  static constexpr size_t tile_k = align16(size_t(kChunk) * KP * 2);
  static constexpr size_t tile_v = align16(size_t(kChunk) * BVP * 2);
  static constexpr size_t A1 = 0;            // W (fwd) / −W (bwd)        bf16 [C][KP]
  static constexpr size_t A2 = A1 + tile_k;  // K̄                         bf16 [C][KP]
  static constexpr size_t A3 = A2 + tile_k;  // Q̂ (bwd)                   bf16 [C][KP]
  static constexpr size_t B1 = A3 + tile_k;  // U slice (fwd) / dO (bwd)  bf16 [C][BVP]
  static constexpr size_t B2 = B1 + tile_v;  // E / dE                    bf16 [C][BVP]
  static constexpr size_t Hb = B2 + tile_v;  // H / ∂H snapshot           bf16 [K][BVP]
  static constexpr size_t Pb = Hb + align16(size_t(K) * BVP * 2);  // P (bwd)  bf16 [C][CP]
  static constexpr size_t gam = Pb + align16(size_t(kChunk) * kCP * 2);
  static constexpr size_t Gsm = gam + align16(K * 4);
  static constexpr size_t total = Gsm + align16(kChunk * 4);
};

template <int VAR, int K, int V, int BV>
__global__ void __launch_bounds__(kThreads) state_fwd_kernel(const DeltaParams p) {
  using L = StateLayout<K, V, BV>;
  using ST = StateTile<K, BV>;
  constexpr int KP = L::KP, BVP = L::BVP, NE = BV / 16;
  extern __shared__ __align__(16) char smem[];
  bf16_t* Ws = reinterpret_cast<bf16_t*>(smem + L::A1);
  bf16_t* Kb = reinterpret_cast<bf16_t*>(smem + L::A2);
  bf16_t* Us = reinterpret_cast<bf16_t*>(smem + L::B1);
  bf16_t* Es = reinterpret_cast<bf16_t*>(smem + L::B2);
  bf16_t* Hb = reinterpret_cast<bf16_t*>(smem + L::Hb);
  float* gam = reinterpret_cast<float*>(smem + L::gam);
  float* Gsm = reinterpret_cast<float*>(smem + L::Gsm);

  constexpr int NV = V / BV;
  const int n = blockIdx.x / NV, v0 = (blockIdx.x % NV) * BV, h = blockIdx.y;
  const int warp = threadIdx.x >> 5;
  const int64_t strideK = int64_t(p.H) * K, strideV = int64_t(p.H) * V;
  const int sm0 = ST::m0(), sn0 = ST::n0();
  const int em0 = 16 * (warp & 3), en0 = (BV / 2) * (warp >> 2);

  float Hacc[1][ST::NT][4];
  frag_zero(Hacc);
  if (p.h0) {
    const float* src = p.h0 + (int64_t(n) * p.H + h) * K * V + v0;
    frag_for_each(Hacc, sm0, sn0, [&](int r, int cc, float& x) { x = src[int64_t(r) * V + cc]; });
  }

  for (int c = p.seq_chunk[n]; c < p.seq_chunk[n + 1]; ++c) {
    const int tok0 = p.chunk_tok[c], len = p.chunk_len[c];
    const int64_t baseK = (int64_t(tok0) * p.H + h) * K, baseV = (int64_t(tok0) * p.H + h) * V + v0;
    load_tile<kChunk, K>(Ws, KP, p.W + baseK, strideK, len);
    load_tile<kChunk, K>(Kb, KP, p.k + baseK, strideK, len);
    load_tile<kChunk, BV>(Us, BVP, p.U + baseV, strideV, len);
    __syncthreads();
    decay_operands<VAR, K, false>(p, tok0, len, h, Kb, nullptr, 0.f, gam, Gsm);
    frag_store_bf16(Hacc, Hb, BVP, sm0, sn0);
    if (p.Hs) {
      bf16_t* dst = p.Hs + (int64_t(c) * p.H + h) * K * V + v0;
      frag_store_global(Hacc, dst, V, sm0, sn0, K);
    }
    __syncthreads();
    {  // E = U − W H
      float acc[1][NE][4];
      frag_zero(acc);
      warp_mma<1, NE, Lay::RowMajor, Lay::RowMajor>(acc, Ws, KP, Hb, BVP, em0, en0, 0, K);
      frag_for_each(acc, em0, en0, [&](int r, int cc, float& x) { x = bf2f(Us[r * BVP + cc]) - x; });
      frag_store_bf16(acc, Es, BVP, em0, en0);
      if (p.E) frag_store_global(acc, p.E + baseV, strideV, em0, en0, len);
    }
    __syncthreads();
    // H ← e^γ ⊙ H + K̄ᵀ E
    frag_for_each(Hacc, sm0, sn0, [&](int r, int, float& x) { x *= gam[r]; });
    warp_mma<1, ST::NT, Lay::ColMajor, Lay::RowMajor>(Hacc, Kb, KP, Es, BVP, sm0, sn0, 0, kChunk);
    __syncthreads();
  }
  if (p.ht) {
    float* dst = p.ht + (int64_t(n) * p.H + h) * K * V + v0;
    frag_for_each(Hacc, sm0, sn0, [&](int r, int cc, float& x) { dst[int64_t(r) * V + cc] = x; });
  }
}

// ------------------------------------------------------------------------------------------------
// chunk_output: O = s (Q̂ H + P E); also stores P when the Save policy keeps it.

template <int VAR, int K, int V>
struct OutputLayout {
  static constexpr int KP = K + 8, VP = V + 8;
  static constexpr bool kVec = VT<VAR>::vec_gate;
  static constexpr size_t tile_k = align16(size_t(kChunk) * KP * 2);
  static constexpr size_t qs = 0;
  static constexpr size_t ks = qs + tile_k;
  static constexpr size_t Gs = ks + tile_k;
  static constexpr size_t QR = Gs + align16((kVec ? kChunk * K : kChunk) * 4);  // row operand, then Q̂
  static constexpr size_t packed = QR + tile_k;
  static constexpr size_t Hb = packed + (kVec ? align16(size_t(kPackedRows) * KP * 2) : 0);  // [K][VP]
  static constexpr size_t Es = Hb + align16(size_t(K) * VP * 2);                            // [C][VP]
  static constexpr size_t Pb = Es + align16(size_t(kChunk) * VP * 2);                       // [C][CP]
  static constexpr size_t total = Pb + align16(size_t(kChunk) * kCP * 2);
};

template <int VAR, int K, int V>
__global__ void __launch_bounds__(kThreads) chunk_output_kernel(const DeltaParams p) {
  using L = OutputLayout<VAR, K, V>;
  constexpr int KP = L::KP, VP = L::VP;
  extern __shared__ __align__(16) char smem[];
  bf16_t* qs = reinterpret_cast<bf16_t*>(smem + L::qs);
  bf16_t* ks = reinterpret_cast<bf16_t*>(smem + L::ks);
  float* Gs = reinterpret_cast<float*>(smem + L::Gs);
  bf16_t* QR = reinterpret_cast<bf16_t*>(smem + L::QR);
  bf16_t* packed = reinterpret_cast<bf16_t*>(smem + L::packed);
  bf16_t* Hb = reinterpret_cast<bf16_t*>(smem + L::Hb);
  bf16_t* Es = reinterpret_cast<bf16_t*>(smem + L::Es);
  bf16_t* Pb = reinterpret_cast<bf16_t*>(smem + L::Pb);

  const int c = blockIdx.x, h = blockIdx.y;
  const int tok0 = p.chunk_tok[c], len = p.chunk_len[c];
  const int warp = threadIdx.x >> 5;
  const int64_t strideK = int64_t(p.H) * K, strideV = int64_t(p.H) * V;
  const int64_t baseK = (int64_t(tok0) * p.H + h) * K, baseV = (int64_t(tok0) * p.H + h) * V;

  load_tile<kChunk, K>(qs, KP, p.q + baseK, strideK, len);
  load_tile<kChunk, K>(ks, KP, p.k + baseK, strideK, len);
  load_tile<K, V>(Hb, VP, p.Hs + (int64_t(c) * p.H + h) * K * V, V, K);
  load_tile<kChunk, V>(Es, VP, p.E + baseV, strideV, len);
  gate_cumsum<VAR, K>(Gs, p, tok0, len, h);
  __syncthreads();

  {
    float acc[1][4][4];
    chunk_P_tile<VAR, K>(acc, qs, ks, Gs, QR, packed);
    frag_store_bf16(acc, Pb, kCP, cc_m0(), cc_n0());
    if (p.P) frag_store_global(acc, p.P + (int64_t(tok0) * p.H + h) * kChunk, int64_t(p.H) * kChunk, cc_m0(), cc_n0(), len);
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < kChunk * K; idx += kThreads) {  // Q̂ = Q ⊙ Γ
    const int i = idx / K, d = idx % K;
    float qh = bf2f(qs[i * KP + d]);
    if constexpr (VT<VAR>::gated) qh *= __expf(gate_at<VAR, K>(Gs, i, d));
    QR[i * KP + d] = f2bf(qh);
  }
  __syncthreads();
  constexpr int NT = V / 16;
  float acc[1][NT][4];
  frag_zero(acc);
  const int m0 = 16 * (warp & 3), n0 = (V / 2) * (warp >> 2);
  warp_mma<1, NT, Lay::RowMajor, Lay::RowMajor>(acc, QR, KP, Hb, VP, m0, n0, 0, K);
  warp_mma<1, NT, Lay::RowMajor, Lay::RowMajor>(acc, Pb, kCP, Es, VP, m0, n0, 0, kChunk);
  frag_store_global(acc, p.o + baseV, strideV, m0, n0, len, p.scale);
}

}  // namespace rewy::delta::cuda_impl
