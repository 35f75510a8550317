// Forward kernels of the chunkwise delta rule (§2), one template family for the four variants.
//
//   wy_prep    chunk-parallel  G, A (§2.1; channel gates through centred 16-row blocks, §6),
//                              𝒯 = (I + A)⁻¹ (fp32 forward substitution), W = 𝒯 Y_W, U = 𝒯 Y_U, and
//                              the operands of the sequential kernels: P = tril(Q̂ K̃ᵀ), Q̂ = Q ⊙ Γ,
//                              K̄ = K ⊙ e^{γ − G}, e^γ.
//   wy_replay  chunk-parallel  the Recompute backward's W, U, Q̂, K̄, e^γ from the saved 𝒯 (P is
//                              saved too): elementwise operands and two GEMMs.
//   state_fwd  sequential      per (sequence, head, V-slice), the following chunks' tiles prefetched
//                              with cp.async: E = U − W H, O = s (Q̂ H + P E), H ← e^γ H + K̄ᵀ E on
//                              warpgroup tensor cores (wgmma). Only the GEMMs of the recurrence sit
//                              on the per-chunk chain. Optionally stores E and the bf16 state
//                              entering each chunk (Save policy, backward replay). DeltaNet's and
//                              GDN's fused Recompute forward holds the state transposed in
//                              registers instead (state_fwd_reg.cuh).
#pragma once
#include "kernels/delta/cuda/common.cuh"
#include "kernels/delta/cuda/tma.cuh"
#include "kernels/delta/cuda/wgmma.cuh"

namespace rewy::delta::cuda_impl {

// ------------------------------------------------------------------------------------------------
// wy_prep

// wy_prep_kernel's EXP for the fused forward's kernel (said there), and its four-CTA form at
// K = 128, the default there (𝒯's fp32 tile over q's slot, 44 KB, at most 64 registers;
// launch_prep says what it measured).
// kPrepTOnlyExp (3; DeltaNet and GDN at K = 128): the four-CTA kernel without q and P, 𝒯 (and β,
// GDN's row gates and e^γ) alone, for the one-kernel forward whose producer forms P from its own
// staged q and k (fwd_fused.cuh's PFORM): k read, no q read and no P written, 24 of the 48 KB a
// chunk the four-CTA kernel moves.
inline constexpr int kPrepFusedExp = 1, kPrepFused4Exp = 2, kPrepTOnlyExp = 3;
constexpr bool prep_fused_only(int exp) { return exp == kPrepFusedExp || exp == kPrepFused4Exp || exp == kPrepTOnlyExp; }
constexpr bool prep_ts_low(int exp) { return exp == kPrepFused4Exp || exp == kPrepTOnlyExp; }

// Row pitch (floats) of wy_prep's fp32 C×C tiles, A and 𝒯 (solve_unit_lower). At 65 the solve's
// tf32 fragment reads of A and 𝒯 meet banks up to four times (rows g at 2t columns: bank g + 2t),
// the diagonal substitution's two row blocks a warp twice (16 rows and 16 columns apart:
// 16 · 65 + 16 ≡ 0), and A's fragment stores up to four times; at 68 those are 1, 1 and 2
// (4g + 2t), and 𝒯's rows leave in 16-byte loads (store_tinv8). The fused forward's kernel and
// wy_prep_split take 68: Recompute forward 1.015x DeltaNet, 1.014x GDN, 1.007x KDA and GDN2 at
// shapes 0, 3, 4, 5 (H200, 2026-12-04, experiment ld68, docs/measurements/2026-12-04-s46/call1/).
// The shared kernel (beside the state pass, the overlapped one) keeps kLdAShared until timed
// (REWY_EXPERIMENTS=ld68sh).
inline constexpr int kLdA = kChunk + 4;
inline constexpr int kLdAShared = kChunk + 1;

// FUSED: the fused forward's kernel (kPrepFusedExp), which stores P, 𝒯 and 𝒯 Diag(β) alone.
// TS_LOW (FUSED, kPrepFused4Exp): the fp32 𝒯 over q's slot beside A over k's (both dead once P and
// A are formed), so that four CTAs fit an SM.
template <int VAR, int K, int V, bool FUSED = false, int LDA = kLdA, bool TS_LOW = false>
struct PrepLayout {
  static constexpr int KP = K + 8, VP = V + 8;
  static constexpr bool kVec = VT<VAR>::vec_gate;
  static_assert(!FUSED || fuses_wu(VAR), "the fused forward's layout: DeltaNet and GDN");
  static constexpr size_t tile_k = align16(size_t(kChunk) * KP * 2);
  static constexpr size_t tile_v = align16(size_t(kChunk) * VP * 2);
  static constexpr size_t ks = 0;                                                  // bf16 [C][KP] k
  static constexpr size_t qs = ks + tile_k;                                        // bf16 [C][KP] q
  static constexpr size_t Gs = qs + tile_k;                                        // f32 [C][kGateLd] or [C]
  static constexpr size_t betas = Gs + align16((kVec ? kChunk * kGateLd<K> : kChunk) * 4);  // f32 [C]
  static constexpr size_t KR = betas + align16(kChunk * 4);  // bf16 [C][KP] row operand, then Y_W
  static constexpr size_t YU = KR + (FUSED ? 0 : tile_k);    // bf16 [C][VP] v, then Y_U
  static constexpr size_t KR2 = YU + (FUSED ? 0 : tile_v);   // bf16 [C][KP] P's second row term (channel gates)
  static constexpr size_t bs = KR2 + (kVec ? tile_k : 0);    // bf16 [C][KP] b (GDN2)
  static constexpr size_t ws = bs + (VAR == kGDN2 ? tile_k : 0);  // bf16 [C][VP] w (GDN2)
  static constexpr size_t R2 = ws + (VAR == kGDN2 ? tile_v : 0);  // packed KC; then Tb [C][CP] + Ts f32 [C][C+1]
  static_assert(!TS_LOW || FUSED, "𝒯 over q: the fused forward's kernel");
  static constexpr size_t Ts = TS_LOW ? qs : R2 + align16(size_t(kChunk) * kCP * 2);
  static constexpr size_t R2_bytes = cmax(kVec ? align16(size_t(kPackedRows) * KP * 2) : 0,
                                          align16(size_t(kChunk) * kCP * 2) + (TS_LOW ? 0 : align16(size_t(kChunk) * LDA * 4)));
  // FUSED: no Y_W, v or Y_U here, and A takes k's and q's slots once P and A are formed.
  static constexpr size_t As = FUSED ? ks : R2 + R2_bytes;  // f32 [C][LDA]
  static constexpr size_t As_bytes = align16(size_t(kChunk) * LDA * 4);
  static_assert(!FUSED || As_bytes <= 2 * tile_k, "A in k's and q's slots");
  static_assert(!TS_LOW || As_bytes <= tile_k, "A over k, 𝒯 (as large) over q");
  static constexpr size_t Tb = R2;  // P staged (bf16 [C][CP]) before the solve, 𝒯 as bf16 after it
  // Channel gates: A's row operand (bf16 [C][KP]) spans As and what follows until A is formed.
  static constexpr size_t total = FUSED ? R2 + R2_bytes : As + (kVec ? cmax(As_bytes, tile_k) : As_bytes);
  static_assert(total + kStaticSmem <= 227 * 1024, "wy_prep's shared memory (and the phase clock's) exceeds 227 KB per block");
  // Two CTAs an SM (228 KB, 1 KB reserved per block) for scalar and no gates. Between 3f3841b and
  // f92f7bc the phase clock's 16 bytes tipped them to one, and DeltaNet's and GDN's forward got
  // 32-40% slower.
  static_assert(kVec || 2 * (total + kStaticSmem + 1024) <= 228 * 1024, "wy_prep (scalar gates) no longer fits two CTAs an SM");
  static_assert(!FUSED || 3 * (total + kStaticSmem + 1024) <= 228 * 1024, "the fused forward's wy_prep: three CTAs an SM");
  static_assert(!TS_LOW || 4 * (total + kStaticSmem + 1024) <= 228 * 1024, "the fused forward's wy_prep at K = 128: four CTAs an SM");
};

// Ts = (I + As)⁻¹ for strictly lower As, both f32 [C][C+1]. Blocked: the four 16×16 diagonal
// blocks by forward substitution in fp32, one thread a column held in registers (the block's As
// rows are broadcast loads; no shuffles or warp barriers between the 15 steps); then the blocks
// below, T_IJ = −T_II M_I with M_I = Σ_{J<=K<I} A_IK T_KJ, on tensor cores in 3xTF32 (about fp32's
// accuracy; 𝒯 leaves as bf16). Warp J < 3 owns block column J and works on transposes, so that
// each result is the left operand of the next product and stays in registers: M_Iᵀ starts as
// T_JJᵀ A_IJᵀ for every I > J, then T_IJᵀ = −M_Iᵀ T_IIᵀ and M_I'ᵀ += T_IJᵀ A_I'Iᵀ for I' > I (each
// A_IK T_KJ added as soon as T_KJ is known). The chain of warp 0 is 6 products. Block rows 2.8-3.3k
// cycles, against 3.2-4.2k row by row with M_I through shared memory (a warp per 8 columns), whose
// diagonal-plus-rows total matched the fp32 micro-tiles on CUDA cores it replaced: wy_prep 1.044-1.053x
// for DeltaNet and GDN, KDA and GDN2 within ±0.6% (H200, 2026-11-30, shapes 0 and 4;
// docs/measurements/2026-11-30-s12/ab_compare_inverse_in_registers.txt); 2.0-2.5k since the tf32
// split is two masks (split_tf32).
// clock_sums: wy_prep's phase clock (marks 2 and 3: the diagonal blocks, the block rows).
// SOLVERS: the threads 0 .. SOLVERS − 1 that solve (the block's NT, or the first warps alone, which
// then meet at named barrier 1 and leave without a block barrier: the caller's next one covers Ts).
template <int NT = kThreads, int SOLVERS = NT, int LD = kLdA>
__device__ __forceinline__ void solve_unit_lower(float* Ts, const float* As, unsigned long long* clock_sums) {
  constexpr int B = kBlock, NB = kChunk / B;
  static_assert(B == 16 && NB == 4 && kChunk <= SOLVERS && SOLVERS % 32 == 0 && SOLVERS / 32 >= NB - 1 && SOLVERS <= NT,
                "4 row blocks of 16; the diagonal's 64 threads and 3 warps for the blocks below");
  auto solvers_sync = [] {
    if constexpr (SOLVERS == NT) __syncthreads();
    else asm volatile("bar.sync 1, %0;\n" ::"n"(SOLVERS) : "memory");
  };
  // Blocks above the diagonal are zero (the diagonal blocks and those below are written next).
  for (int idx = threadIdx.x; idx < kChunk * kChunk; idx += SOLVERS) {
    const int r = idx / kChunk, c = idx % kChunk;
    if (r / B < c / B) Ts[r * LD + c] = 0.f;
  }
  if (int(threadIdx.x) < kChunk) {
    const int col = threadIdx.x, base = col / B * B, cl = col - base;
    const float* a = As + base * LD + base;  // the diagonal block of As
    float t[B];  // T[base + i][col]
#pragma unroll
    for (int i = 0; i < B; ++i) {
      float s = 0.f;
#pragma unroll
      for (int j = 0; j < i; ++j) s += a[i * LD + j] * t[j];  // t[j] = 0 above the column's diagonal
      t[i] = i < cl ? 0.f : i == cl ? 1.f : -s;
    }
#pragma unroll
    for (int i = 0; i < B; ++i) Ts[(base + i) * LD + col] = t[i];
  }
  solvers_sync();
  phase_mark(clock_sums, 2);
  const int J = threadIdx.x >> 5;  // warp J: block column J
  if (J < NB - 1) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    auto block = [&](const float* m, int I, int K) { return m + B * I * LD + B * K; };
    float M[NB][2][4];  // M_Iᵀ for I > J, accumulator layout
    Tf32Left left;
    Tf32Acc acc;
    tf32_left_transposed(left, block(Ts, J, J), LD);  // T_JJᵀ
#pragma unroll
    for (int I = 1; I < NB; ++I)
      if (I > J) {
        tf32_mul_transposed(acc, left, block(As, I, J), LD);  // T_JJᵀ A_IJᵀ
        tf32_fold<false>(M[I], acc, 1.f);
      }
#pragma unroll
    for (int I = 1; I < NB; ++I) {
      if (I <= J) continue;
      float T[2][4];  // T_IJᵀ
      tf32_left_from_acc(left, M[I]);
      tf32_mul_transposed(acc, left, block(Ts, I, I), LD);
      tf32_fold<false>(T, acc, -1.f);
      tf32_left_from_acc(left, T);
#pragma unroll
      for (int I2 = I + 1; I2 < NB; ++I2) {
        tf32_mul_transposed(acc, left, block(As, I2, I), LD);
        tf32_fold<true>(M[I2], acc, 1.f);
      }
      // Entry (m, n) of T_IJᵀ is T[16 I + n][16 J + m].
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float* out = Ts + (B * I + 8 * j + 2 * t) * LD + B * J + g + 8 * h;
          out[0] = T[j][2 * h];
          out[LD] = T[j][2 * h + 1];
        }
    }
  }
  if constexpr (SOLVERS == NT) {
    __syncthreads();
    phase_mark(clock_sums, 3);
  }
}

// W = 𝒯 Y_W and U = 𝒯 Y_U, rows r < len, into global memory [r * stride + col] (warps: 4 row
// blocks × NT / 128 column groups). Each result goes, as bf16, over its own right-hand side in
// shared memory (YW [C][K + 8], YU [C][V + 8], dead once every warp has read it) and out in
// 16-byte row pieces: the mma fragment layout's 4-byte stores to global memory were 71% of
// DeltaNet's replay (its "W,U" phase, 828517b). One accumulator is live at a time. PREFETCH: as
// warp_mma's (wy_prep's, not the replay's). 𝒯 is lower triangular: with PREFETCH, row block I's
// products stop at its own block (k < 16 (I + 1)), the zero blocks beyond are not read (KDA's
// wy_prep 1.02x); the replay's unpipelined loop lost 1-7% with that runtime bound (H200, 2026-12-01).
// PAIR (KDA/GDN2's wy_prep): both products in one k-loop, 𝒯's fragments loaded once for the two,
// one barrier fewer; both accumulators live. wy_prep 1.010x / 1.027x, forward 1.006x / 1.018x
// (H200, 2026-12-01, docs/measurements/2026-12-01-s15/); DeltaNet's and GDN's 8-warp kernel
// would reach 156 registers (one CTA an SM).
// SPLIT_LD (wy_prep_split's early gates): Y_W in two [C][SPLIT_LD] tiles of K / 2 columns, YW and
// YW1; at 8 warps each column group of warps forms one tile's half of W.
template <int K, int V, int NT, bool PREFETCH = false, bool PAIR = false, int SPLIT_LD = 0>
__device__ __forceinline__ void tinv_apply_store_wu(const bf16_t* Tb, bf16_t* YW, bf16_t* YU, bf16_t* W, int64_t strideK,
                                                    bf16_t* U, int64_t strideV, int len, bf16_t* YW1 = nullptr) {
  constexpr int KP = K + 8, VP = V + 8, NK = kWarpTiles<K, NT>, NV = kWarpTiles<V, NT>;
  constexpr bool kSplit = SPLIT_LD > 0;
  static_assert(!kSplit || (NT == 256 && !PAIR), "split Y_W: 8 warps (a column group a tile), one product at a time");
  const int m0 = warp_m0(), nK = warp_n0<K, NT>(), nV = warp_n0<V, NT>();
  const int k_end = PREFETCH ? m0 + kBlock : kChunk;
  // This warp's Y_W (and W) tile, its leading dimension and its first column there.
  bf16_t* const yw = kSplit && nK != 0 ? YW1 : YW;
  constexpr int kLdW = kSplit ? SPLIT_LD : KP;
  const int nW = kSplit ? 0 : nK;
  if constexpr (PAIR) {
    float accW[1][NK][4], accU[1][NV][4];
    frag_zero(accW);
    frag_zero(accU);
    warp_mma_shared_a<NK, NV, Lay::RowMajor, Lay::RowMajor, PREFETCH>(accW, accU, Tb, kCP, YW, KP, nK, YU, VP, nV, m0, 0, k_end);
    __syncthreads();  // Y_W and Y_U are read
    frag_store_bf16(accW, YW, KP, m0, nK);
    frag_store_bf16(accU, YU, VP, m0, nV);
    __syncthreads();  // W and U are staged
    store_tile_rows<kChunk, K, NT>(W, strideK, YW, KP, len);
    store_tile_rows<kChunk, V, NT>(U, strideV, YU, VP, len);
    return;
  }
  {
    float acc[1][NK][4];
    frag_zero(acc);
    warp_mma<1, NK, Lay::RowMajor, Lay::RowMajor, PREFETCH>(acc, Tb, kCP, yw, kLdW, m0, nW, 0, k_end);
    __syncthreads();  // Y_W is read
    frag_store_bf16(acc, yw, kLdW, m0, nW);
  }
  {
    float acc[1][NV][4];
    frag_zero(acc);
    warp_mma<1, NV, Lay::RowMajor, Lay::RowMajor, PREFETCH>(acc, Tb, kCP, YU, VP, m0, nV, 0, k_end);
    __syncthreads();  // W is staged, Y_U is read
    frag_store_bf16(acc, YU, VP, m0, nV);
  }
  if constexpr (kSplit) {
    store_tile_rows<kChunk, K / 2, NT>(W, strideK, YW, kLdW, len);
    store_tile_rows<kChunk, K / 2, NT>(W + K / 2, strideK, YW1, kLdW, len);
  } else {
    store_tile_rows<kChunk, K, NT>(W, strideK, YW, KP, len);
  }
  __syncthreads();  // U is staged
  store_tile_rows<kChunk, V, NT>(U, strideV, YU, VP, len);
}

// Operands of the sequential kernels for row i, channels d0..d0+7: Q̂ = Q ⊙ Γ (and its second bf16
// term where p.Qlo is set; store_q) and K̄ = K ⊙ e^{γ − G} (store_kbar) into global memory at `at`
// (both false past the chunk's end), and Y_W = B ⊙ K ⊙ Γ into yw_out (Γ shared; B: β per row, or
// GDN2's b). Rows >= len are flat in G. wy_prep and wy_replay both form them here, so the replay's
// are the forward's bit for bit. KT (the fused forward of channel gates, kfuse in delta_cuda.cu's
// forward): K ⊙ Γ too (KDA; GDN2: Y_W itself, its b by channels), into p.W at `at` (with K̄).
template <int VAR, int K, bool KT = false>
__device__ __forceinline__ void chunk_operands8(const DeltaParams& p, int i, int d0, const float (&q)[8],
                                                const float (&k)[8], const float (&co)[8], const float* Gs, int64_t at,
                                                bool store_q, bool store_kbar, bf16_t* yw_out) {
  float G[8], gam[8];
  gate_at8<VAR, K>(G, Gs, i, d0);
  gate_at8<VAR, K>(gam, Gs, kChunk - 1, d0);
  float qg[8], kg[8], yw[8], kt[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    const float eg = VT<VAR>::gated ? exp_ftz(G[e]) : 1.f;
    qg[e] = q[e] * eg;
    kg[e] = VT<VAR>::gated ? k[e] * exp_ftz(gam[e] - G[e]) : k[e];
    kt[e] = eg * k[e];
    yw[e] = co[e] * eg * k[e];
  }
  if (KT && store_kbar) store8_global(p.W + at, VAR == kGDN2 ? yw : kt);
  if (VT<VAR>::gated && store_q) {  // (no gates: Q̂ and K̄ are q and k themselves)
    store8_global(p.Qg + at, qg);
    if (p.Qlo) store8_global<true>(p.Qlo + at, qg);
  }
  if (VT<VAR>::gated && store_kbar) store8_global(p.Kg + at, kg);
  store8(yw_out, yw);
}

// GDN's row gates for the state pass (fused_gate): e^{G_i} and e^{γ − G_i} of chunk c, head h,
// into p.gate_rows (or dst: p.gate_rows_kept).
template <int NT>
__device__ __forceinline__ void store_gate_rows(const DeltaParams& p, const float* Gs, int c, int h,
                                                float* dst = nullptr) {
  float* const rows = (dst ? dst : p.gate_rows) + (int64_t(c) * p.H + h) * 2 * kChunk;
  for (int i = threadIdx.x; i < kChunk; i += NT) {
    rows[i] = exp_ftz(Gs[i]);
    rows[kChunk + i] = exp_ftz(Gs[kChunk - 1] - Gs[i]);
  }
}

// e^γ of chunk c, head h (1 for ungated variants), by threads tid = 0 .. count − 1; KS, c0: the
// channels c0 .. c0 + KS − 1 alone, from a slice's G tile (gate_issue's KS, c0).
template <int VAR, int K, int KS = K>
__device__ __forceinline__ void store_gexp_of(const DeltaParams& p, const float* Gs, int c, int h, int tid, int count,
                                              int c0 = 0) {
  for (int d = tid; d < KS; d += count)
    p.gexp[(int64_t(c) * p.H + h) * K + c0 + d] = VT<VAR>::gated ? exp_ftz(gate_at<VAR, KS>(Gs, kChunk - 1, d)) : 1.f;
}
template <int VAR, int K, int NT>
__device__ __forceinline__ void store_gexp(const DeltaParams& p, const float* Gs, int c, int h) {
  store_gexp_of<VAR, K>(p, Gs, c, h, threadIdx.x, NT);
}

// Where a chunk-parallel CTA works: chunk c = blockIdx.x, head h = blockIdx.y (with p.prep_items:
// the CTA's place in the grid taking the item list's chunks in order, every head of one before the
// next), the chunk's first token and rows, and the element offsets and row strides of its [C][K],
// [C][V] and [C][C] slices.
__device__ __forceinline__ int4 chunk_item(const DeltaParams& p) {
  if (!p.prep_items) {
    const int c = blockIdx.x;
    return {c, p.chunk_tok[c], p.chunk_len[c], int(blockIdx.y)};
  }
  const int64_t place = blockIdx.x + int64_t(gridDim.x) * blockIdx.y;
  const int4 it = p.prep_items[place / p.H];
  prep_lead_wait(p, it.w);  // (it.w: the chunk's position in its sequence)
  return {it.x, it.y, it.z, int(place % p.H)};
}
template <int K, int V>
struct ChunkAt {
  int c, h, tok0, len;
  int64_t strideK, strideV, strideC, baseK, baseV, baseC;
  __device__ explicit ChunkAt(const DeltaParams& p)
      : c(blockIdx.x), h(blockIdx.y), tok0(p.chunk_tok[c]), len(p.chunk_len[c]), strideK(int64_t(p.H) * K),
        strideV(int64_t(p.H) * V), strideC(int64_t(p.H) * kChunk), baseK((int64_t(tok0) * p.H + h) * K),
        baseV((int64_t(tok0) * p.H + h) * V), baseC((int64_t(tok0) * p.H + h) * kChunk) {}
  // it: chunk_item's {chunk, tok0, len, head}.
  __device__ ChunkAt(const DeltaParams& p, int4 it)
      : c(it.x), h(it.w), tok0(it.y), len(it.z), strideK(int64_t(p.H) * K), strideV(int64_t(p.H) * V),
        strideC(int64_t(p.H) * kChunk), baseK((int64_t(tok0) * p.H + h) * K), baseV((int64_t(tok0) * p.H + h) * V),
        baseC((int64_t(tok0) * p.H + h) * kChunk) {}
};

// Row r, columns c0 .. c0 + 7 of 𝒯 from fp32 Ts [C][LD] into t, as bf16 into Tb [C][kCP] and,
// inside the chunk, into p.Tinv (16-byte stores).
template <int K, int V, int LD = kLdA>
__device__ __forceinline__ void store_tinv8(float (&t)[8], const float* Ts, bf16_t* Tb, const DeltaParams& p,
                                            const ChunkAt<K, V>& at, int r, int c0) {
  if constexpr (LD % 4 == 0) {
    load8(t, Ts + r * LD + c0);
  } else {
#pragma unroll
    for (int e = 0; e < 8; ++e) t[e] = Ts[r * LD + c0 + e];
  }
  store8(Tb + r * kCP + c0, t);
  if (r < at.len) store8_global(p.Tinv + at.baseC + int64_t(r) * at.strideC + c0, t);
}

// Row r, columns c0 .. c0 + 7 of 𝒯 in t, times β of those columns, into out (𝒯 Diag(β), [tok][H][C]);
// the caller keeps r inside the chunk (columns past its end: β = 0).
template <int K, int V>
__device__ __forceinline__ void store_tbeta8(float (&t)[8], const float* betas, bf16_t* out, const ChunkAt<K, V>& at,
                                             int r, int c0) {
#pragma unroll
  for (int e = 0; e < 8; ++e) t[e] *= betas[c0 + e];
  store8_global(out + at.baseC + int64_t(r) * at.strideC + c0, t);
}

// β of row threadIdx.x < C of the chunk (0 past its end, for GDN2, and for threads >= C), read
// into a register ahead of the kernel's tile copies so that it does not arrive behind them.
template <int VAR>
__device__ __forceinline__ float issue_beta(const DeltaParams& p, int tok0, int len, int h) {
  if constexpr (VT<VAR>::has_beta)
    if (int(threadIdx.x) < len) return bf2f(p.beta[int64_t(tok0 + threadIdx.x) * p.H + h]);
  return 0.f;
}

// β of the chunk's rows (bt: issue_beta's) into betas [C], G into Gs (gate_scan; the caller called
// gate_issue ahead of its own tile copies), then lands those copies and synchronises the block:
// the first phase of wy_prep and wy_replay.
template <int VAR, int K, int NT>
__device__ __forceinline__ void betas_and_gates(float* betas, float* Gs, const DeltaParams& p, float bt) {
  if (threadIdx.x < kChunk) betas[threadIdx.x] = bt;
  phase_start(p.phase_cycles);
  cp_async_commit();  // the caller's tiles: one group, left in flight during the scan
  gate_scan<VAR, K, NT>(Gs, p);
  tiles_landed();
  phase_mark(p.phase_cycles, 0);
}

// Phases of wy_prep for REWY_KERNEL_TIMING=2.
inline constexpr const char* kPrepPhases[] = {"loads+G", "P,A", "inv diag", "inv blocks", "operands", "W,U"};
// wy_prep_split_kernel's: its P,A phase split into the slices' products (and P's store), the
// later slices' gate scans with the wait for their inputs, and the operand builds.
inline constexpr const char* kPrepSplitPhases[] = {"loads+G", "P,A mma", "inv diag", "inv blocks",
                                                   "operands", "W,U",   "scan+wait", "build"};

// NT threads: 8 warps, or 16 (one CTA an SM for channel gates: twice the warps to hide latency).
// OVERLAP (Config::prep_overlap, where W and U are formed here): warps 0-2 solve for 𝒯
// (named barrier 1) while the others build the operands, which do not depend on it; then "inv
// blocks" spans both, and "operands" holds 𝒯's conversion alone. KDA's solve takes 1.4k -> 4.6k
// cycles beside the builders, the whole 8.2k -> 7.5k (H200, 2026-12-01).
// EXP 0, or kPrepFusedExp (1): DeltaNet's and GDN's fused forward where wy_prep runs alone (launch_prep says when
// and what it measured), the fused path alone, its layout without Y_W, v and Y_U and with A over k
// and q (PrepLayout's FUSED: 60 KB, 79-80 registers, the P,A k-loop without the fragment prefetch,
// with which it spilled), three CTAs an SM where the shared kernel fits two (110 KB, 112
// registers): the solve is a chain on a few warps, and a third CTA gives the SM other work beside
// it. kPrepFused4Exp (2; K = 128): the same with 𝒯 over q's slot too (44 KB), four CTAs an SM at 64
// registers. (A minimum of 0 emits no .minnctapersm: EXP 0 keeps its SASS, which .minnctapersm 1
// changes.)
template <int VAR, int K, int V, int NT, bool OVERLAP = false, int EXP = 0, int LDA = kLdA>
__global__ void __launch_bounds__(NT, (EXP == kPrepFusedExp ? 3 : prep_ts_low(EXP) ? 4 : 0))
    wy_prep_kernel(const DeltaParams p) {
  static_assert(NT == 256 || NT == 512, "8 or 16 warps");
  constexpr bool kFusedOnly = prep_fused_only(EXP), kTOnly = EXP == kPrepTOnlyExp;
  static_assert(!kFusedOnly || (fuses_wu(VAR) && NT == 256 && !OVERLAP), "kPrepFusedExp: the fused forward's 8-warp kernel");
  static_assert(!kTOnly || (fuses_wu(VAR) && K == 128), "kPrepTOnlyExp: DeltaNet's and GDN's one-kernel forward");
  using L = PrepLayout<VAR, K, V, kFusedOnly, LDA, prep_ts_low(EXP)>;
  constexpr int KP = L::KP, VP = L::VP;
  extern __shared__ __align__(16) char smem[];
  bf16_t* ks = reinterpret_cast<bf16_t*>(smem + L::ks);
  bf16_t* qs = reinterpret_cast<bf16_t*>(smem + L::qs);
  float* Gs = reinterpret_cast<float*>(smem + L::Gs);
  float* betas = reinterpret_cast<float*>(smem + L::betas);
  bf16_t* KR = reinterpret_cast<bf16_t*>(smem + L::KR);
  bf16_t* KR2 = reinterpret_cast<bf16_t*>(smem + L::KR2);
  bf16_t* packed = reinterpret_cast<bf16_t*>(smem + L::R2);
  bf16_t* Tb = reinterpret_cast<bf16_t*>(smem + L::Tb);
  float* Ts = reinterpret_cast<float*>(smem + L::Ts);
  bf16_t* YU = reinterpret_cast<bf16_t*>(smem + L::YU);
  bf16_t* bs = reinterpret_cast<bf16_t*>(smem + L::bs);
  bf16_t* ws = reinterpret_cast<bf16_t*>(smem + L::ws);
  float* As = reinterpret_cast<float*>(smem + L::As);

  if (!on_path(p.path_flag, p.path_value)) return;  // the decay cut's other path runs (DeltaParams::path_flag)
  const ChunkAt<K, V> at(p, chunk_item(p));  // (position order beside the pass: p.prep_items)

  const float bt = issue_beta<VAR>(p, at.tok0, at.len, at.h);
  gate_issue<VAR, K, NT>(Gs, p, at.tok0, at.len, at.h);
  load_tile<kChunk, K, NT>(ks, KP, p.k + at.baseK, at.strideK, at.len);
  if (!kTOnly) load_tile<kChunk, K, NT>(qs, KP, p.q + at.baseK, at.strideK, at.len);
  // (The fused forward forms U in the state pass: no v here.)
  const bool fused = kFusedOnly || (fuses_wu(VAR) && p.Tbeta != nullptr);
  if (!fused) load_tile<kChunk, V, NT>(YU, VP, p.v + at.baseV, at.strideV, at.len);
  if constexpr (VAR == kGDN2) {
    load_tile<kChunk, K, NT>(bs, KP, p.b + at.baseK, at.strideK, at.len);
    load_tile<kChunk, V, NT>(ws, VP, p.w + at.baseV, at.strideV, at.len);
  }
  betas_and_gates<VAR, K, NT>(betas, Gs, p, bt);
  if constexpr (VT<VAR>::vec_gate) check_gate_span<K, NT>(Gs, p);

  // P = tril(Q̂ K̃ᵀ) and A = stril(K̂ K̃ᵀ): channel gates share the packed column operand.
  float accP[1][kWarpTiles<kChunk, NT>][4], accA[1][kWarpTiles<kChunk, NT>][4];
  if constexpr (VT<VAR>::vec_gate) {
    // One pass builds every operand of P and A: the packed KC; P's row operand in two bf16 terms
    // (with one, the rounding of the scaled q is the largest error in o: twin KDA o 4.1e-3 ->
    // 3.7e-3 at T = 64, FLA 3.4e-3); A's row operand (b ⊙ k, same exponential as q's) from As on,
    // which are written only after A is formed.
    bf16_t* KA = reinterpret_cast<bf16_t*>(As);
    for_each_row_octet<kChunk, K, NT>([&](int i, int d0) {
      build_scaled_rows8<VAR, K>(i, i / kBlock, d0, Gs, qs, ks, betas, bs, KR + i * KP + d0, KR2 + i * KP + d0, KA + i * KP + d0, packed);
    });
    __syncthreads();
    packed_cc_products3<K, NT>(accP, accA, KR, KR2, KA, packed);
  } else if constexpr (kTOnly) {
    frag_zero(accA);
    warp_mma<1, kWarpTiles<kChunk, NT>, Lay::RowMajor, Lay::ColMajor, false>(accA, ks, KP, ks, KP, warp_m0(),
                                                                       warp_n0<kChunk, NT>(), 0, K);
  } else {
    // Q Kᵀ and K Kᵀ in one k-loop, K's fragments loaded once for both: wy_prep 1.056x DeltaNet,
    // 1.068x GDN against two products (H200, 2026-12-01, docs/measurements/2026-12-01-s14/).
    // (Skipping the column tiles above the diagonal block, masked away below, measured 1-3% slower.)
    frag_zero(accP);
    frag_zero(accA);
    warp_mma_pair<kWarpTiles<kChunk, NT>, Lay::RowMajor, Lay::ColMajor, !kFusedOnly>(accP, accA, qs, ks, KP, ks, KP, warp_m0(),
                                                                              warp_n0<kChunk, NT>(), 0, K);
  }
  // GDN's fused kernel: P's and A's entries (r, c) sit at the same fragment coordinates and take
  // the same e^{G_r − G_c}: one exponential (and one read of the two gates) for both, A's β_r with
  // it (46 -> 30 MUFU, 245 -> 213 LDS in its SASS; the two-pass form, experiment pamold, 0.989x
  // the forward at shapes 0, 1, 4). The shared kernel keeps two passes: with one, GDN's Recompute
  // forward where it runs beside the state pass (32 pairs) took 0.93x at (2, 8192, 16) and
  // (1, 32768, 32) (H200, 2026-12-04, docs/measurements/2026-12-04-s45/call3/) and again 0.978x
  // at shapes 0, 3, 4, 5, worst 0.925 (experiment pamsh, docs/measurements/2026-12-04-s46/call1/).
  constexpr bool kOneExp = VT<VAR>::scalar_gate && kFusedOnly;
  if constexpr (kOneExp) {
    frag_visit_pairs<1, kWarpTiles<kChunk, NT>>(warp_m0(), warp_n0<kChunk, NT>(), [&](int i, int j, int h, int r, int c) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int cc = c + e;
        const float decay = r >= cc ? exp_ftz(Gs[r] - Gs[cc]) : 0.f;
        float &xp = accP[i][j][2 * h + e], &xa = accA[i][j][2 * h + e];
        if constexpr (!kTOnly) xp = r >= cc ? xp * decay : 0.f;  // (kTOnly: P is the one kernel's)
        xa = r > cc ? betas[r] * (xa * decay) : 0.f;
      }
    });
  } else if constexpr (!kTOnly) {
    frag_for_each(accP, warp_m0(), warp_n0<kChunk, NT>(), [&](int r, int cc, float& x) { x = gated_entry<VAR, K>(x, Gs, r, cc, r >= cc); });
  }

  if constexpr (VT<VAR>::vec_gate) __syncthreads();  // A's row operand (in As) and the packed KC (under Tb) are read
  // P leaves through Tb's slot (free until 𝒯 is formed) in 16-byte rows, not 4-byte fragment stores.
  if constexpr (!kTOnly) frag_store_bf16(accP, Tb, kCP, warp_m0(), warp_n0<kChunk, NT>());
  if constexpr (kFusedOnly) __syncthreads();  // every warp's products have read k and q: As takes their slots
  frag_for_each(accA, warp_m0(), warp_n0<kChunk, NT>(), [&](int r, int cc, float& x) {
    if constexpr (VT<VAR>::vec_gate) As[r * LDA + cc] = r > cc ? x : 0.f;  // b folded in the rows
    else if constexpr (kOneExp) As[r * LDA + cc] = x;
    else As[r * LDA + cc] = betas[r] * gated_entry<VAR, K>(x, Gs, r, cc, r > cc);
  });
  __syncthreads();  // As complete, P staged; the packed operand (aliased by Ts) is dead
  if constexpr (!kTOnly)  // (read before the solve's barriers)
    store_tile_rows<kChunk, kChunk, NT>(p.P + at.baseC, at.strideC, Tb, kCP, at.len);
  phase_mark(p.phase_cycles, 1);
  // 𝒯 Diag(β) for the fused state pass, or kept for the backward's replay (p.Tbeta_kept).
  // (p.row_betas: none, β of the rows instead; the passes read 𝒯 and take β on the rows.)
  bf16_t* const tbeta_out = p.row_betas ? nullptr : fused ? p.Tbeta : p.Tbeta_kept;
  store_row_betas(p, betas, at.c, at.h);
  auto convert_T = [&](int r, int c0) {  // 𝒯 as bf16
    float t[8];
    store_tinv8<K, V, LDA>(t, Ts, Tb, p, at, r, c0);
    if (tbeta_out && r < at.len) store_tbeta8(t, betas, tbeta_out, at, r, c0);
  };
  // GDN's fused forward (fused_gate; p.gate_rows set): no Q̂ and no K̄, the state pass reads q
  // and k and scales by the rows' gates in fp32 (Q̂ H's rows by e^G, E's rows by e^{γ − G}).
  const bool row_gates = VAR == kGDN && p.gate_rows != nullptr;
  // The row gates for that pass, or kept for the backward's replay (p.gate_rows_kept, unfused).
  float* const gate_rows_out = VAR != kGDN ? nullptr : row_gates ? p.gate_rows : p.gate_rows_kept;
  // Operands of the sequential kernels for row i, channels d0..: Q̂, K̄ and Y_W (into KR).
  auto operand_octet = [&](int i, int d0) {
    float q[8], k[8], co[8];
    load8(q, qs + i * KP + d0);
    load8(k, ks + i * KP + d0);
    load_row_coef8<VAR, KP>(co, betas, bs, i, d0);
    const bool store = i < at.len && !row_gates;
    chunk_operands8<VAR, K>(p, i, d0, q, k, co, Gs, at.baseK + int64_t(i) * at.strideK + d0, store, store, KR + i * KP + d0);
  };
  if (OVERLAP && !fused) {  // (OVERLAP is a template flag: without it this branch folds away)
    constexpr int kSolvers = 96;  // the diagonal's 64 threads, 3 warps for the blocks below
    if (int(threadIdx.x) < kSolvers) {
      solve_unit_lower<NT, kSolvers, LDA>(Ts, As, p.phase_cycles);  // mark 2
    } else {
      // Five warps build (of the 13 the solve leaves at 16 warps, all five at 8): the solve and the
      // builds contend for shared memory and issue slots (KDA's solve alone 3.5k cycles, the builds
      // alone 4.7k, both 6.5k with 13 builders). Five against 13: KDA's kernel 409.0 -> 391.8 us
      // (1.044x), GDN2's 1.029x; nine 1.025x / 1.014x; three, four and seven slower than five
      // (0.94x, 0.98x, 0.98x) (H200, 2026-12-01, docs/measurements/2026-12-01-s16/).
      constexpr int kBuilders = std::min(160, NT - kSolvers);
      const int tid = threadIdx.x - kSolvers, count = kBuilders;
      if (kBuilders == NT - kSolvers || tid < kBuilders) {
        for_each_row_octet_of<kChunk, K>(tid, count, operand_octet);
        store_gexp_of<VAR, K>(p, Gs, at.c, at.h, tid, count);
        for_each_row_octet_of<kChunk, V>(tid, count, [&](int i, int e0) { omega_scale_octet<VAR, V>(YU, ws, betas, i, e0); });
      }
    }
    __syncthreads();  // 𝒯 (fp32), the operands and Y_U
    phase_mark(p.phase_cycles, 3);
    for_each_row_octet<kChunk, kChunk, NT>(convert_T);
    if (gate_rows_out) store_gate_rows<NT>(p, Gs, at.c, at.h, gate_rows_out);
  } else {
    solve_unit_lower<NT, NT, LDA>(Ts, As, p.phase_cycles);  // marks 2 and 3
    for_each_row_octet<kChunk, kChunk, NT>(convert_T);
    if (gate_rows_out) store_gate_rows<NT>(p, Gs, at.c, at.h, gate_rows_out);
    if (fused) {  // W and U are the state pass's: e^γ is left for it
      store_gexp<VAR, K, NT>(p, Gs, at.c, at.h);
      phase_mark(p.phase_cycles, 4);
      phase_mark(p.phase_cycles, 5);
      prep_count_out(p, at.c, at.h);
      return;
    }
    // Operands of the sequential kernels (Y_W into KR), Y_U = Ω ⊙ V in place over v.
    for_each_row_octet<kChunk, K, NT>(operand_octet);
    store_gexp<VAR, K, NT>(p, Gs, at.c, at.h);
    omega_scale_rows<VAR, V, NT>(YU, ws, betas);
  }
  tiles_landed();
  phase_mark(p.phase_cycles, 4);

  tinv_apply_store_wu<K, V, NT, true, VT<VAR>::vec_gate>(Tb, KR, YU, p.W + at.baseK, at.strideK, p.U + at.baseV,
                                                         at.strideV, at.len);
  phase_mark(p.phase_cycles, 5);  // thread 0's view
  prep_count_out(p, at.c, at.h);
}

// ------------------------------------------------------------------------------------------------
// wy_prep in channel slices (channel gates: KDA, GDN2), two CTAs an SM. wy_prep_kernel's layout
// for channel gates is 178-212 KB (one CTA an SM), and its phases are chains on a few warps (the
// solve on 3, the diagonal blocks on 2) that nothing else on the SM overlaps. Here P and A
// accumulate over slices of 64 channels: each slice's q, k, G (b) land, its P/A operands and
// packed column operand are built with Q̂, K̄ and Y_W in the same pass, and its products add to
// registers while the next slice's inputs (after the last, v and w) land over the dead ones; A, 𝒯
// and P then take the slice operands' place. About 102 KB (KDA) and 111 KB (GDN2) a CTA.
// EARLY (KDA at K = 128, its default: kPrepEarlyGates): the second slice's gates land and are
// scanned with the first's (their own slot, Gs2), so only its q and k travel during the first
// slice's products; Y_W is kept as two [C][SP] slice tiles, the second in the first slice's G slot
// (dead by then). About 111 KB a CTA.
// TB (the fused forward of channel gates, kfuse in delta_cuda.cu's forward: p.Tbeta set): KDA: K ⊙ Γ
// into p.W and 𝒯 Diag(β) into p.Tbeta instead of W and U, which the state pass then forms E from
// (as DeltaNet's fused pass): no v, no Y_U, no W,U products. GDN2 (experiment g2fuse; its b and
// w do not factor out as row scales): Y_W into p.W and Y_U (v times w) into p.U, the pass reading 𝒯
// (p.Tinv, which p.Tbeta points at) beside them: E = 𝒯 (Y_U − Y_W H).
template <int VAR, int K, int V, bool EARLY = false, int LDA = kLdA>
struct PrepSplitLayout {
  static constexpr int KS = 64, NS = K / KS;  // channels a slice, slices
  static constexpr int SP = KS + 8, KP = K + 8, VP = V + 8, GLS = kGateLd<KS>;
  static_assert(K % KS == 0 && VT<VAR>::vec_gate, "channel gates, K a multiple of 64");
  static constexpr size_t tile_s = align16(size_t(kChunk) * SP * 2);  // bf16 [C][SP]
  static constexpr size_t tile_k = align16(size_t(kChunk) * KP * 2);
  static constexpr size_t tile_v = align16(size_t(kChunk) * VP * 2);
  static constexpr size_t tile_f32cc = align16(size_t(kChunk) * LDA * 4);
  // A slice's inputs, dead once its operands are built.
  static constexpr size_t qs = 0;                                   // bf16 [C][SP] q
  static constexpr size_t ks = qs + tile_s;                         // bf16 [C][SP] k
  static constexpr size_t Gs = ks + tile_s;                         // f32 [C][GLS]
  static constexpr size_t bs = Gs + align16(size_t(kChunk) * GLS * 4);  // bf16 [C][SP] b (GDN2)
  static constexpr size_t inputs_end = bs + (VAR == kGDN2 ? tile_s : 0);
  // Over them from the last slice's products on: v, then Y_U; w (GDN2).
  static constexpr size_t YU = 0, ws = YU + tile_v;
  static constexpr size_t betas = cmax(inputs_end, ws + (VAR == kGDN2 ? tile_v : 0));  // f32 [C]
  // A slice's operands: P's row operand in two bf16 terms, A's, the packed KC (kPackedRows rows).
  static constexpr size_t R = betas + align16(kChunk * 4), R_lo = R + tile_s, R_A = R_lo + tile_s;
  static constexpr size_t packed = R_A + tile_s;
  static constexpr size_t operands_end = packed + align16(size_t(kPackedRows) * SP * 2);
  // Over them after the last slice: A and 𝒯 (f32 [C][LDA]), P and then 𝒯 as bf16 [C][kCP].
  static constexpr size_t As = R, Ts = As + tile_f32cc, Tb = Ts + tile_f32cc;
  static_assert(Tb + align16(size_t(kChunk) * kCP * 2) <= operands_end, "A, 𝒯 and P overflow the slice operands");
  static constexpr size_t YW = operands_end;  // bf16 [C][KP] Y_W (the whole K); EARLY: [C][SP], slice 0
  static constexpr size_t YW1 = Gs;            // EARLY: Y_W's slice 1, [C][SP]
  static constexpr size_t Gs2 = YW + tile_s;   // EARLY: f32 [C][GLS], slice 1's gates
  static_assert(!EARLY || (VAR != kGDN2 && NS == 2 && tile_s <= inputs_end - Gs && YU + tile_v <= Gs),
                "early gates: KDA at K = 128 (Y_U over q, k; Y_W's second slice in G's slot)");
  static constexpr size_t total = EARLY ? Gs2 + align16(size_t(kChunk) * GLS * 4) : YW + tile_k;
  static_assert(2 * (total + kStaticSmem + 1024) <= 228 * 1024, "wy_prep in slices no longer fits two CTAs an SM");
};

template <int VAR, int K, int V, int NT, bool EARLY = false, int LDA = kLdA, bool TB = false>
__global__ void __launch_bounds__(NT, 2) wy_prep_split_kernel(const DeltaParams p) {
  static_assert(NT == kThreads, "8 warps: two CTAs an SM at up to 128 registers");
  static_assert(!TB || VAR == kKDA || VAR == kGDN2, "TB: the fused forward of channel gates");
  using L = PrepSplitLayout<VAR, K, V, EARLY, LDA>;
  constexpr int KS = L::KS, SP = L::SP, KP = L::KP, VP = L::VP, NC = kWarpTiles<kChunk, NT>;
  extern __shared__ __align__(16) char smem[];
  bf16_t* qs = reinterpret_cast<bf16_t*>(smem + L::qs);
  bf16_t* ks = reinterpret_cast<bf16_t*>(smem + L::ks);
  float* Gs = reinterpret_cast<float*>(smem + L::Gs);
  bf16_t* bs = reinterpret_cast<bf16_t*>(smem + L::bs);
  bf16_t* YU = reinterpret_cast<bf16_t*>(smem + L::YU);
  bf16_t* ws = reinterpret_cast<bf16_t*>(smem + L::ws);
  float* betas = reinterpret_cast<float*>(smem + L::betas);
  bf16_t* R = reinterpret_cast<bf16_t*>(smem + L::R);
  bf16_t* R_lo = reinterpret_cast<bf16_t*>(smem + L::R_lo);
  bf16_t* R_A = reinterpret_cast<bf16_t*>(smem + L::R_A);
  bf16_t* packed = reinterpret_cast<bf16_t*>(smem + L::packed);
  float* As = reinterpret_cast<float*>(smem + L::As);
  float* Ts = reinterpret_cast<float*>(smem + L::Ts);
  bf16_t* Tb = reinterpret_cast<bf16_t*>(smem + L::Tb);
  bf16_t* YW = reinterpret_cast<bf16_t*>(smem + L::YW);
  bf16_t* YW1 = reinterpret_cast<bf16_t*>(smem + L::YW1);  // EARLY
  float* Gs2 = reinterpret_cast<float*>(smem + L::Gs2);    // EARLY

  const ChunkAt<K, V> at(p, chunk_item(p));
  const float bt = issue_beta<VAR>(p, at.tok0, at.len, at.h);
  if (threadIdx.x < kChunk) betas[threadIdx.x] = bt;  // read after the first slice's barrier
  phase_start(p.phase_cycles);
  float accP[1][NC][4], accA[1][NC][4];
  frag_zero(accP);
  frag_zero(accA);
  // A slice's inputs: the gates first, as a group of their own (gate_issue's order), so the scan
  // waits for them alone.
  auto issue_rows = [&](int c0) {  // a slice's q, k (b)
    load_tile<kChunk, KS, NT>(qs, SP, p.q + at.baseK + c0, at.strideK, at.len);
    load_tile<kChunk, KS, NT>(ks, SP, p.k + at.baseK + c0, at.strideK, at.len);
    if constexpr (VAR == kGDN2) load_tile<kChunk, KS, NT>(bs, SP, p.b + at.baseK + c0, at.strideK, at.len);
    cp_async_commit();
  };
  auto issue_slice = [&](int c0) {
    gate_issue<VAR, K, NT, KS>(Gs, p, at.tok0, at.len, at.h, c0);
    issue_rows(c0);
  };
  if constexpr (EARLY) {
    gate_issue<VAR, K, NT, KS>(Gs, p, at.tok0, at.len, at.h, 0);
    gate_issue<VAR, K, NT, KS>(Gs2, p, at.tok0, at.len, at.h, KS);
    issue_rows(0);
  } else {
    issue_slice(0);
  }
#pragma unroll 1
  for (int sl = 0; sl < L::NS; ++sl) {
    const int c0 = sl * KS;  // the slice's first channel
    float* const Gsl = EARLY && sl == 1 ? Gs2 : Gs;  // this slice's gates
    if constexpr (EARLY) {
      if (sl == 0) {  // both slices' gates (two groups) have landed: one scan for the two
        cp_async_wait<1>();
        __syncthreads();
        scan_vec_gate_tiles<KS, NT, 2>(Gs, Gs2, p);
      }
    } else {
      gate_scan<VAR, KS, NT>(Gs, p);
    }
    tiles_landed();
    phase_mark(p.phase_cycles, sl == 0 ? 0 : 6);  // a later slice's scan and wait: kPrepSplitPhases
    check_gate_span<KS, NT>(Gsl, p);
    bf16_t* const yw_slice = sl == 0 ? YW : YW1;  // EARLY: the slice's own Y_W tile
    // From one read of each row octet's q, k and coefficient: P's and A's operands
    // (build_scaled_rows8_of), Q̂ and K̄ into global memory and Y_W into its whole-K tile
    // (chunk_operands8).
    for_each_row_octet<kChunk, KS, NT>([&](int i, int d0) {
      float q[8], k[8], co[8];
      load8(q, qs + i * SP + d0);
      load8(k, ks + i * SP + d0);
      load_row_coef8<VAR, SP>(co, betas, bs, i, d0);
      build_scaled_rows8_of<KS>(i, i / kBlock, d0, Gsl, q, k, co, R + i * SP + d0, R_lo + i * SP + d0, R_A + i * SP + d0,
                                packed);
      const bool store = i < at.len;
      chunk_operands8<VAR, KS, TB>(p, i, d0, q, k, co, Gsl, at.baseK + int64_t(i) * at.strideK + c0 + d0, store, store,
                                   EARLY ? yw_slice + i * SP + d0 : YW + i * KP + c0 + d0);
    });
    store_gexp_of<VAR, K, KS>(p, Gsl, at.c, at.h, threadIdx.x, NT, c0);
    __syncthreads();  // the slice's operands are built, its inputs dead
    phase_mark(p.phase_cycles, 7);
    // The next slice's inputs, or v (and w) after the last, travel during this slice's products.
    if (sl + 1 < L::NS) {
      if constexpr (EARLY) issue_rows(c0 + KS);
      else issue_slice(c0 + KS);
    } else if constexpr (!TB || VAR == kGDN2) {
      load_tile<kChunk, V, NT>(YU, VP, p.v + at.baseV, at.strideV, at.len);
      if constexpr (VAR == kGDN2) load_tile<kChunk, V, NT>(ws, VP, p.w + at.baseV, at.strideV, at.len);
      cp_async_commit();
    }
    packed_cc_products3<KS, NT, false>(accP, accA, R, R_lo, R_A, packed);
    // (Without this barrier but the last slice's, and P straight from the fragments to global
    // memory: KDA 337.8 -> 342.6 us, GDN2 349.8 -> 354.5, H200, 2026-12-01,
    // docs/measurements/2026-12-01-s18/call2-experiments/.)
    __syncthreads();  // the slice's operands are read
  }
  frag_for_each(accP, warp_m0(), warp_n0<kChunk, NT>(), [&](int r, int cc, float& x) { x = r >= cc ? x : 0.f; });
  frag_store_bf16(accP, Tb, kCP, warp_m0(), warp_n0<kChunk, NT>());
  frag_for_each(accA, warp_m0(), warp_n0<kChunk, NT>(), [&](int r, int cc, float& x) {
    As[r * LDA + cc] = r > cc ? x : 0.f;  // b (β) folded in the rows
  });
  cp_async_wait<0>();
  __syncthreads();  // As complete, P staged, v (w) landed
  store_tile_rows<kChunk, kChunk, NT>(p.P + at.baseC, at.strideC, Tb, kCP, at.len);
  phase_mark(p.phase_cycles, 1);
  // (Y_U on the warps the solve leaves, behind a named barrier, measured within 0.4%; H200,
  // 2026-12-01: the other CTA on the SM fills the solve's idle warps.)
  solve_unit_lower<NT, NT, LDA>(Ts, As, p.phase_cycles);  // marks 2 and 3
  if constexpr (TB) {
    if constexpr (VAR == kGDN2) omega_scale_rows<VAR, V, NT>(YU, ws, betas);  // Y_U
    for_each_row_octet<kChunk, kChunk, NT>([&](int r, int c0) {
      float t[8];
      store_tinv8<K, V, LDA>(t, Ts, Tb, p, at, r, c0);  // (GDN2's pass reads this 𝒯)
      if (VT<VAR>::has_beta && !p.row_betas && r < at.len) store_tbeta8(t, betas, p.Tbeta, at, r, c0);
    });
    store_row_betas(p, betas, at.c, at.h);
    if constexpr (VAR == kGDN2) {
      __syncthreads();  // Y_U complete
      store_tile_rows<kChunk, V, NT>(p.U + at.baseV, at.strideV, YU, VP, at.len);
    }
    phase_mark(p.phase_cycles, 4);
  } else {
    omega_scale_rows<VAR, V, NT>(YU, ws, betas);
    for_each_row_octet<kChunk, kChunk, NT>([&](int r, int c0) {
      float t[8];
      store_tinv8<K, V, LDA>(t, Ts, Tb, p, at, r, c0);
    });
    __syncthreads();
    phase_mark(p.phase_cycles, 4);
    // W = 𝒯 Y_W; EARLY: Y_W in its two slice tiles.
    tinv_apply_store_wu<K, V, NT, true, false, EARLY ? SP : 0>(Tb, YW, YU, p.W + at.baseK, at.strideK, p.U + at.baseV,
                                                                at.strideV, at.len, YW1);
  }
  phase_mark(p.phase_cycles, 5);  // thread 0's view
  prep_count_out(p, at.c, at.h);
}

// ------------------------------------------------------------------------------------------------
// wy_replay: the Recompute backward's rebuild of what the state passes read (W, U, Q̂ with its
// second term, K̄, e^γ; GDN: W, U, e^γ and the row gates) from the inputs and the saved 𝒯. The forward keeps P beside 𝒯 (as FLA's
// KDA/GDN2 keep Aqk and Akk), so no C×C product is left here: the row operands come from global
// memory straight into registers, issued before the gate scan so that their latency overlaps it,
// and only G, Y_W, Y_U and 𝒯 take shared memory (two CTAs an SM for channel gates too, where
// wy_prep in this role held one).

template <int VAR, int K, int V>
struct ReplayLayout {
  static constexpr int KP = K + 8, VP = V + 8;
  static constexpr size_t Gs = 0;  // f32 [C][kGateLd] or [C]
  static constexpr size_t betas = Gs + align16((VT<VAR>::vec_gate ? kChunk * kGateLd<K> : kChunk) * 4);  // f32 [C]
  static constexpr size_t YW = betas + align16(kChunk * 4);                 // bf16 [C][KP] Y_W
  static constexpr size_t YU = YW + align16(size_t(kChunk) * KP * 2);       // bf16 [C][VP] Y_U
  static constexpr size_t Tb = YU + align16(size_t(kChunk) * VP * 2);       // bf16 [C][CP] 𝒯
  static constexpr size_t total = Tb + align16(size_t(kChunk) * kCP * 2);
  static_assert(2 * (total + kStaticSmem + 1024) <= 228 * 1024, "wy_replay no longer fits two CTAs an SM");
};

inline constexpr const char* kReplayPhases[] = {"loads+G", "operands", "W,U"};

// 16 bytes of row `row` (zero past the chunk's end) of a [rows][stride] bf16 input, read-only path.
__device__ __forceinline__ uint4 load_row16(const bf16_t* base, int64_t stride, int row, int col, int len) {
  return row < len ? __ldg(reinterpret_cast<const uint4*>(base + int64_t(row) * stride + col)) : make_uint4(0, 0, 0, 0);
}

// NT threads: 8 warps, or 16 (registers capped at 64 a thread so that two CTAs still fit an SM).
// Two CTAs an SM for every variant: capping the registers of the scalar-gate kernels for three
// (GDN, 80) or four (DeltaNet, 60) made them 2-5% slower (H200, 2026-11-30).
// NO_Q (GDN's Recompute backward, q_from_row_gates): no Q̂ and no second term (state_bwd_wg_kernel's QRAW forms them).
// TBETA (fused_replay: the replay's state pass forms E from 𝒯 Diag(β), k and v): W alone (for
// state_bwd) and 𝒯 Diag(β) into p.Tbeta, no v, Y_U or U. NO_W (replay_no_w: state_bwd forms
// Wᵀ∂E from 𝒯 Diag(β) and k, state_bwd_wg_kernel's TBW): 𝒯 Diag(β) and the gates alone, no q, k,
// Y_W or W (the Recompute backward runs it only where the forward kept no 𝒯 Diag(β):
// LaunchInfo::tbeta_saved).
template <int VAR, int K, int V, int NT, bool NO_Q = false, bool TBETA = false, bool NO_W = false>
__global__ void __launch_bounds__(NT, 2) wy_replay_kernel(const DeltaParams p) {
  static_assert(NT == 256 || NT == 512, "8 or 16 warps");
  static_assert(!TBETA || fuses_wu(VAR), "TBETA: DeltaNet's and GDN's replay");
  static_assert(!NO_W || (TBETA && (NO_Q || VAR != kGDN)), "NO_W: the fused replay, GDN's without Q̂");
  using L = ReplayLayout<VAR, K, V>;
  constexpr int KP = L::KP, VP = L::VP;
  constexpr int kOctK = kChunk * K / 8 / NT, kOctV = kChunk * V / 8 / NT;  // row octets a thread
  static_assert(kChunk * K / 8 % NT == 0 && kChunk * V / 8 % NT == 0, "whole row octets a thread");
  extern __shared__ __align__(16) char smem[];
  float* Gs = reinterpret_cast<float*>(smem + L::Gs);
  float* betas = reinterpret_cast<float*>(smem + L::betas);
  bf16_t* YW = reinterpret_cast<bf16_t*>(smem + L::YW);
  bf16_t* YU = reinterpret_cast<bf16_t*>(smem + L::YU);
  bf16_t* Tb = reinterpret_cast<bf16_t*>(smem + L::Tb);

  const ChunkAt<K, V> at(p);
  // This thread's octet `it` of a [C][N] tile: the order of for_each_row_octet.
  auto row_of = [](int it, int N) { return (it * NT + int(threadIdx.x)) / (N / 8); };
  auto col_of = [](int it, int N) { return (it * NT + int(threadIdx.x)) % (N / 8) * 8; };

  const float bt = issue_beta<VAR>(p, at.tok0, at.len, at.h);
  gate_issue<VAR, K, NT>(Gs, p, at.tok0, at.len, at.h);
  load_tile<kChunk, kChunk, NT>(Tb, kCP, p.Tinv + at.baseC, at.strideC, at.len);
  uint4 qr[kOctK], kr[kOctK], br[kOctK], vr[kOctV], wr[kOctV];
#pragma unroll
  for (int it = 0; it < (NO_W ? 0 : kOctK); ++it) {
    const int i = row_of(it, K), d0 = col_of(it, K);
    if constexpr (VT<VAR>::gated) qr[it] = load_row16(p.q + at.baseK, at.strideK, i, d0, at.len);
    kr[it] = load_row16(p.k + at.baseK, at.strideK, i, d0, at.len);
    if constexpr (VAR == kGDN2) br[it] = load_row16(p.b + at.baseK, at.strideK, i, d0, at.len);
  }
#pragma unroll
  for (int it = 0; it < (TBETA ? 0 : kOctV); ++it) {
    const int i = row_of(it, V), e0 = col_of(it, V);
    vr[it] = load_row16(p.v + at.baseV, at.strideV, i, e0, at.len);
    if constexpr (VAR == kGDN2) wr[it] = load_row16(p.w + at.baseV, at.strideV, i, e0, at.len);
  }
  betas_and_gates<VAR, K, NT>(betas, Gs, p, bt);

  const bool row_gates = VAR == kGDN && p.gate_rows != nullptr;
#pragma unroll
  for (int it = 0; it < (NO_W ? 0 : kOctK); ++it) {
    const int i = row_of(it, K), d0 = col_of(it, K);
    float q[8] = {}, k[8], co[8];
    if constexpr (VT<VAR>::gated) unpack8(q, qr[it]);
    unpack8(k, kr[it]);
    if constexpr (VAR == kGDN2) unpack8(co, br[it]);
    else
#pragma unroll
      for (int e = 0; e < 8; ++e) co[e] = betas[i];
    // GDN's replay state pass takes k and the row gates (fused_gate): no K̄.
    chunk_operands8<VAR, K>(p, i, d0, q, k, co, Gs, at.baseK + int64_t(i) * at.strideK + d0, i < at.len && !NO_Q,
                            i < at.len && !row_gates, YW + i * KP + d0);
  }
  store_gexp<VAR, K, NT>(p, Gs, at.c, at.h);
  if (row_gates) store_gate_rows<NT>(p, Gs, at.c, at.h);
  if constexpr (TBETA) {
    __syncthreads();  // Y_W (and 𝒯, β) complete
    phase_mark(p.phase_cycles, 1);
    constexpr int NK = kWarpTiles<K, NT>;
    const int m0 = warp_m0(), nK = warp_n0<K, NT>();
    float acc[1][NK][4];
    if constexpr (!NO_W) {
      frag_zero(acc);
      warp_mma<1, NK, Lay::RowMajor, Lay::RowMajor, false>(acc, Tb, kCP, YW, KP, m0, nK, 0, kChunk);
    }
    for_each_row_octet<kChunk, kChunk, NT>([&](int r, int c0) {  // 𝒯 Diag(β), rows < len (β = 0 past len)
      if (r >= at.len) return;
      float t[8];
      load8(t, Tb + r * kCP + c0);
      store_tbeta8(t, betas, p.Tbeta, at, r, c0);
    });
    if constexpr (!NO_W) {
      __syncthreads();  // Y_W is read
      frag_store_bf16(acc, YW, KP, m0, nK);
      __syncthreads();  // W is staged
      store_tile_rows<kChunk, K, NT>(p.W + at.baseK, at.strideK, YW, KP, at.len);
    }
    phase_mark(p.phase_cycles, 2);
  } else {
#pragma unroll
    for (int it = 0; it < kOctV; ++it) {  // Y_U = Ω ⊙ V (Ω: GDN2's w, else β per row)
      const int i = row_of(it, V), e0 = col_of(it, V);
      float x[8], om[8];
      unpack8(x, vr[it]);
      if constexpr (VAR == kGDN2) unpack8(om, wr[it]);
      else
#pragma unroll
        for (int e = 0; e < 8; ++e) om[e] = betas[i];
#pragma unroll
      for (int e = 0; e < 8; ++e) x[e] = om[e] * x[e];
      store8(YU + i * VP + e0, x);
    }
    __syncthreads();
    phase_mark(p.phase_cycles, 1);

    // (W and U in one k-loop, as wy_prep's channel gates: DeltaNet 0.91x (two CTAs an SM where it
    // had three), GDN 0.94x, GDN2 even, KDA 1.017x (H200, 2026-12-01, docs/measurements/2026-12-01-s15/).)
    tinv_apply_store_wu<K, V, NT>(Tb, YW, YU, p.W + at.baseK, at.strideK, p.U + at.baseV, at.strideV, at.len);
    phase_mark(p.phase_cycles, 2);
  }
}

// ------------------------------------------------------------------------------------------------
// Sequential kernels: the backward state pass's tiles (mma.sync; the forward's are below).

// Warp tile of the K×BV state: K = 128: warp w owns rows [16 w, +16), all BV columns;
// K = 64: rows [16 (w & 3), +16), columns [(BV / 2)(w >> 2), +BV / 2).
template <int K, int BV>
struct StateTile {
  static constexpr int NT = K == 128 ? BV / 8 : BV / 16;
  __device__ static int m0() { return K == 128 ? 16 * (threadIdx.x >> 5) : 16 * ((threadIdx.x >> 5) & 3); }
  __device__ static int n0() { return K == 128 ? 0 : (BV / 2) * (threadIdx.x >> 7); }
};

// One pipeline stage: the tiles of one chunk, prefetched while the previous chunk is computed.
// QLO: also Q̂'s second bf16 term (the backward of the gated variants: ∂H's s Q̂ᵀ∂O with one bf16
// term of Q̂ is the largest error in ∂S0; two terms carry about 16 bits).
// KRAW (scalar gates, backward): the raw keys K in K̄'s slot and the chunk's raw log-decays g, so
// that K̄ ∂H⁺ = Diag(e^{γ−G}) K ∂H⁺ takes its decay in fp32 instead of through a bf16 K̄.
template <int K, int BV, bool QLO = false, bool KRAW = false>
struct SeqStage {
  static constexpr int KP = K + 8, BVP = BV + 8;
  static constexpr size_t tile_k = align16(size_t(kChunk) * KP * 2);
  static constexpr size_t tK1 = 0;               // W                     bf16 [C][KP]
  static constexpr size_t tK2 = tK1 + tile_k;     // K̄                     bf16 [C][KP]
  static constexpr size_t tK3 = tK2 + tile_k;     // Q̂                     bf16 [C][KP]
  static constexpr size_t tK4 = tK3 + tile_k;     // Q̂ − bf16(Q̂) (QLO)     bf16 [C][KP]
  static constexpr size_t tP = tK4 + (QLO ? tile_k : 0);  // P             bf16 [C][CP]
  // ∂O slice bf16 [C][BVP]
  static constexpr size_t tV = tP + align16(size_t(kChunk) * kCP * 2);
  static constexpr size_t tG = tV + align16(size_t(kChunk) * BVP * 2);  // e^γ f32 [K]
  static constexpr size_t tGr = tG + align16(K * 4);                      // raw g (KRAW) f32 [C]
  static constexpr size_t span = tGr + (KRAW ? align16(kChunk * 4) : 0);  // ChunkSpan
  static constexpr size_t bytes = span + 16;

  // The tiles of a landed stage.
  struct Tiles {
    const bf16_t *W, *Kb, *Qh, *Qlo, *P;  // Kb: K̄, or K (KRAW)
    bf16_t* vs;                            // ∂O
    const float *gam, *graw;
    ChunkSpan span;
  };
  __device__ static Tiles tiles(char* st) {
    auto bf = [&](size_t off) { return reinterpret_cast<const bf16_t*>(st + off); };
    auto f32 = [&](size_t off) { return reinterpret_cast<const float*>(st + off); };
    return {bf(tK1), bf(tK2), bf(tK3), QLO ? bf(tK4) : nullptr, bf(tP),
            reinterpret_cast<bf16_t*>(st + tV), f32(tG), KRAW ? f32(tGr) : nullptr,
            *reinterpret_cast<const ChunkSpan*>(st + span)};
  }

  // Issues the cp.async copies of chunk c's tiles (at sp) into stage memory `st`; keeps sp there.
  __device__ static void prefetch(char* st, const DeltaParams& p, int c, ChunkSpan sp, int h, int v0, int V) {
    const int tok0 = sp.tok0, len = sp.len;
    if (threadIdx.x == 0) *reinterpret_cast<ChunkSpan*>(st + span) = sp;
    const int64_t rowK = int64_t(p.H) * K * 2, rowV = int64_t(p.H) * V * 2, rowC = int64_t(p.H) * kChunk * 2;
    const int64_t baseK = (int64_t(tok0) * p.H + h) * K;
    async_tile<kChunk, K * 2>(st + tK1, KP * 2, p.W + baseK, rowK, len);
    async_tile<kChunk, K * 2>(st + tK2, KP * 2, (KRAW ? p.k : p.Kg) + baseK, rowK, len);
    async_tile<kChunk, K * 2>(st + tK3, KP * 2, p.Qg + baseK, rowK, len);
    if constexpr (QLO) async_tile<kChunk, K * 2>(st + tK4, KP * 2, p.Qlo + baseK, rowK, len);
    async_tile<kChunk, kChunk * 2>(st + tP, kCP * 2, p.P + (int64_t(tok0) * p.H + h) * kChunk, rowC, len);
    async_tile<kChunk, BV * 2>(st + tV, BVP * 2, p.dout + (int64_t(tok0) * p.H + h) * V + v0, rowV, len);
    async_tile<1, K * 4>(st + tG, 0, p.gexp + (int64_t(c) * p.H + h) * K, 0, 1);
    if constexpr (KRAW)
      if (int(threadIdx.x) < kChunk) {
        const int i = threadIdx.x, valid = i < len;
        cp_async4(st + tGr + 4 * i, p.g + (int64_t(tok0) + (valid ? i : 0)) * p.H + h, valid);
      }
  }
};

// Two stages, the bf16 state, and the backward's −∂E, a [C][BVP] operand buffer.
template <int K, int V, int BV, bool QLO = false, bool KRAW = false>
struct SeqLayout {
  using S = SeqStage<K, BV, QLO, KRAW>;
  static constexpr size_t stages = 0;
  static constexpr size_t Hb = 2 * S::bytes;                                // bf16 [K][BVP]
  static constexpr size_t Eb = Hb + align16(size_t(K) * S::BVP * 2);       // bf16 [C][BVP]
  static constexpr size_t total = Eb + align16(size_t(kChunk) * S::BVP * 2);
  static_assert(total <= 227 * 1024, "sequential kernel's shared memory exceeds the H200's 227 KB per block");
};

// e^{γ − G_r} at this thread's accumulator rows r = m0 + g and m0 + g + 8 (g = lane / 4) of a C×·
// warp tile, from a chunk's raw scalar log-decays graw[C] (rows past the chunk's end hold 0, so G
// stays flat and γ = G_{C−1}): every warp scans the chunk itself, two rows a lane.
__device__ __forceinline__ float2 scalar_row_decays(const float* graw, int m0) {
  static_assert(kChunk == 64, "two rows a lane");
  const int lane = threadIdx.x & 31;
  const float2 G = warp_pair_cumsum(graw[2 * lane], graw[2 * lane + 1]);
  const float G_even = G.x, G_odd = G.y;  // G at rows 2 lane and 2 lane + 1
  const float gamma = __shfl_sync(0xffffffffu, G_odd, 31);
  const int r0 = m0 + (lane >> 2), r1 = r0 + 8;
  const float e0 = __shfl_sync(0xffffffffu, G_even, r0 >> 1), o0 = __shfl_sync(0xffffffffu, G_odd, r0 >> 1);
  const float e1 = __shfl_sync(0xffffffffu, G_even, r1 >> 1), o1 = __shfl_sync(0xffffffffu, G_odd, r1 >> 1);
  return make_float2(exp_ftz(gamma - (r0 & 1 ? o0 : e0)), exp_ftz(gamma - (r1 & 1 ? o1 : e1)));
}

// Where a sequential kernel's block works: sequence n, head h, V-slice [v0, v0 + BV); the warp's
// tile of the K×BV state (sm0, sn0) and of the C×BV chunk operands (em0, en0).
template <int K, int V, int BV>
struct SeqBlock {
  int n, h, v0, sm0, sn0, em0, en0;
  __device__ SeqBlock()
      : n(blockIdx.x / (V / BV)), h(blockIdx.y), v0((blockIdx.x % (V / BV)) * BV), sm0(StateTile<K, BV>::m0()),
        sn0(StateTile<K, BV>::n0()), em0(warp_m0()), en0(warp_n0<BV>()) {}
  // This block's slice of a [N][H][K][V] state tensor.
  template <class T>
  __device__ T* state(T* base, int H) const { return base + (int64_t(n) * H + h) * K * V + v0; }
  // Loads (src non-null) or zeroes the warp's fragment of the state slice.
  template <int NT>
  __device__ void load_state(float (&acc)[1][NT][4], const float* src, int H) const {
    frag_zero(acc);
    if (src) frag_for_each(acc, sm0, sn0, [&](int r, int cc, float& x) { x = state(src, H)[int64_t(r) * V + cc]; });
  }
  template <int NT>
  __device__ void store_state(float (&acc)[1][NT][4], float* dst, int H) const {
    if (dst) frag_for_each(acc, sm0, sn0, [&](int r, int cc, float& x) { state(dst, H)[int64_t(r) * V + cc] = x; });
  }
};

// The chunk loop of the sequential kernels: body(c, stage) for the chunks c of sequence n in order
// (REVERSE: last to first), the next NS − 1 chunks' tiles in flight (cp.async) while body runs;
// body must end with a block barrier (its stage is refilled next). A chunk's span is read from the
// chunk table one step before its prefetch and travels in its stage (S::span): no dependent global
// load heads a step.
// The forward pass beside wy_prep (Config::prep_beside) reads the flags of the next kFenceEvery
// chunks relaxed and fences once for them (prep_fence_point).
inline constexpr int kFenceEvery = 4;

// chunk_range_loop: the same over the chunks [c_begin, c_begin + count) (the decay cut's pass,
// which starts before its segment: state_fwd_body's WARM).
template <class S, int NS, bool REVERSE, class Body, bool BESIDE = false>
__device__ __forceinline__ void chunk_range_loop(char* stages, const DeltaParams& p, int c_begin, int count, int h, int v0,
                                                 int V, Body&& body) {
  auto chunk = [&](int i) { return REVERSE ? c_begin + count - 1 - i : c_begin + i; };
  auto span = [&](int i) { return i < count ? ChunkSpan{p.chunk_tok[chunk(i)], p.chunk_len[chunk(i)]} : ChunkSpan{0, 0}; };
  auto stage = [&](int i) { return stages + (i % NS) * S::bytes; };
  static_assert(!(BESIDE && REVERSE), "wy_prep beside the forward pass only");
  // Beside wy_prep (p.prep_done): thread 0 acquires the flags of the chunks the prologue and step 0
  // issue; the body's prep_fence_point those of the later ones. (An acquire a step, while the
  // step's copies land or at its end, kept none of the gain at the few-pair shapes: 0.87-1.03x
  // for DeltaNet and GDN, H200, 2026-12-03, docs/perf-delta.md's thirty-sixth session.)
  [[maybe_unused]] unsigned long long t_start = 0;  // BESIDE: REWY_BESIDE_CLOCK's
  // BESIDE with p.beside_maps (KDA's and GDN2's pass): the shared tiles by TMA boxes on full[i % NS].
  [[maybe_unused]] __shared__ uint64_t full[BESIDE ? NS : 1];
  [[maybe_unused]] bool boxes = false;
  if constexpr (BESIDE) {
    if constexpr (S::kBesideBoxes) boxes = p.beside_maps != nullptr;
    if (threadIdx.x == 0) {
      t_start = beside_pass_start(p);
      for (int i = 0; i < NS && i < count; ++i) wait_prep_flag(p, chunk(i), h);
      if (boxes) {
        for (int i = 0; i < NS; ++i) tma::mbar_init(&full[i], 1);
        tma::fence_barrier_init();
      }
    }
    __syncthreads();
  }
  auto prefetch = [&](int i, ChunkSpan sp) {
    if constexpr (BESIDE) {
      if constexpr (S::kBesideBoxes)
        if (boxes) return S::prefetch_beside(stage(i), p, chunk(i), sp, h, v0, V, &full[i % NS]);
    }
    S::prefetch(stage(i), p, chunk(i), sp, h, v0, V);
  };
#pragma unroll
  for (int i = 0; i < NS - 1; ++i) {
    if (i < count) prefetch(i, span(i));
    cp_async_commit();
  }
  ChunkSpan ahead = span(NS - 1);
  __syncthreads();  // the prologue's spans (thread 0 stores them) before step 0 reads its own; a later
                    // chunk's span is stored at least one step, and so one barrier, before its step
  for (int i = 0; i < count; ++i) {
    const int j = i + NS - 1;
    if (j < count) prefetch(j, ahead);
    ahead = span(j + 1);  // for the next step's prefetch: its latency hides behind this step
    cp_async_commit();    // (an empty group near the end keeps the count)
    cp_async_wait<NS - 1>();
    if constexpr (BESIDE)
      if (boxes) tma::mbar_wait(&full[i % NS], (i / NS) & 1);  // (each thread: no barrier needed for its reads)
    body(chunk(i), stage(i));
  }
  cp_async_wait<0>();
  if constexpr (BESIDE)
    if (threadIdx.x == 0) beside_pass_end(p, t_start, count);
}
template <class S, int NS, bool REVERSE, class Body, bool BESIDE = false>
__device__ __forceinline__ void seq_chunk_loop(char* stages, const DeltaParams& p, int n, int h, int v0, int V,
                                               Body&& body) {
  const int c_begin = p.seq_chunk[n], count = p.seq_chunk[n + 1] - c_begin;
  chunk_range_loop<S, NS, REVERSE, Body, BESIDE>(stages, p, c_begin, count, h, v0, V, static_cast<Body&&>(body));
}

// ------------------------------------------------------------------------------------------------
// Forward state pass on warpgroup tensor cores: wgmma reads both operands from shared memory once
// per 64 rows (mma.sync's 16-row warp tiles read them four times over).
//
// Every operand is a 128-byte-swizzled K-major tile (wgmma.cuh): the stage's W, K̄, Q̂ [C][K] and
// P [C][C] land through cp.async at swizzled addresses; the threads write the state and E
// transposed, Hᵀ [BV][K] and Eᵀ [BV][C], so that any BV >= 16 works. Warpgroup 0 forms
// E = U − W H while warpgroup 1 forms Q̂ H; then warpgroup 1 adds P E and stores O, and warpgroup
// w < K / 64 updates its state rows [64 w, 64 w + 64): H ← e^γ ⊙ H + K̄ᵀ E.

// cp.async of a [ROWS][COLS] bf16 tile (global rows row_stride elements apart) into wgmma.cuh's
// swizzled K-major layout, by threads 0 .. NT − 1; rows >= valid are zero-filled.
template <int ROWS, int COLS, int NT = kThreads, bool STEP = true>  // STEP: as async_tile's
__device__ __forceinline__ void async_tile_sw128(bf16_t* dst, const bf16_t* src, int64_t row_stride, int valid) {
  constexpr int kChunks = COLS / 8;  // 16-byte pieces of a row
  static_assert(NT % kChunks == 0 && ROWS * kChunks % NT == 0, "pieces must tile the threads evenly");
  constexpr int kStep = NT / kChunks;  // a multiple of 8: a thread's swizzle phase is fixed
  const int r0 = threadIdx.x / kChunks, col = 8 * (threadIdx.x % kChunks);
  const bf16_t* g = src + int64_t(r0) * row_stride + col;  // advanced by one add a row (async_tile)
  const int64_t step = int64_t(kStep) * row_stride;
#pragma unroll
  for (int i = 0; i < ROWS / kStep; ++i) {
    const int r = r0 + i * kStep;
    if constexpr (STEP) {
      cp_async16(dst + wg::tile_offset<ROWS>(r, col), r < valid ? g : src, r < valid);
      g += step;
    } else {
      cp_async16(dst + wg::tile_offset<ROWS>(r, col), r < valid ? src + int64_t(r) * row_stride + col : src, r < valid);
    }
  }
}

// dst[r * row_stride + c] = T(r, c) for rows r < valid of a swizzled [C][64] tile T (tile_offset's
// layout), in 16-byte pieces by the 128 threads of a warpgroup: async_tile_sw128's reverse.
__device__ __forceinline__ void store_sw128_rows(bf16_t* dst, int64_t row_stride, const bf16_t* T, int valid) {
  const int t = threadIdx.x & 127;
#pragma unroll
  for (int k = 0; k < kChunk * 8 / 128; ++k) {
    const int idx = t + 128 * k, row = idx >> 3, piece = idx & 7;
    if (row < valid)
      *reinterpret_cast<uint4*>(dst + int64_t(row) * row_stride + 8 * piece) =
          *reinterpret_cast<const uint4*>(T + wg::tile_offset<kChunk>(row, 8 * piece));
  }
}

// One stage of the forward state pass: one chunk's tiles. Swizzled tiles are 1024-byte aligned.
// FUSED (fused_wu): 𝒯 Diag(β) [C][C] in W's place (𝒯 with p.row_betas, the rows' β in rbeta) and
// the V-slice [C][BV] (swizzled; read as fragments) in U's. GATE (fused_gate, or GDN's Save forward with saved row gates): k in
// K̄'s place, q in Q̂'s, and the rows' e^G, e^{γ−G}. KT (with FUSED: the fused forward of channel
// gates, kfuse in delta_cuda.cu's forward): a [C][K] tile from p.W for K H, K̄ as before: kKtGammaK
// (KDA: K ⊙ Γ), kKtYw (GDN2: Y_W, and Y_U from p.U in v's place).
inline constexpr int kKtGammaK = 1, kKtYw = 2;
template <int K, int BV, bool OUTPUT, bool FUSED = false, bool GATE = false, int KT = 0>
struct WgStateStage {
  static constexpr int BVP = BV + 8;
  static constexpr size_t tile_k = size_t(kChunk) * K * 2;
  static constexpr size_t W = 0;                                       // bf16 [C][K], FUSED: 𝒯 Diag(β) [C][C]
  static constexpr size_t Kb = W + (FUSED ? size_t(kChunk) * kChunk * 2 : tile_k), Qh = Kb + tile_k;  // [C][K]
  static constexpr size_t P = Qh + (OUTPUT ? tile_k : 0);             // bf16 [C][C] swizzled (OUTPUT)
  static constexpr size_t U = P + (OUTPUT ? size_t(kChunk) * kChunk * 2 : 0);  // bf16 [C][BVP]; FUSED: v [C][BV] swizzled
  static constexpr size_t Kt = U + (FUSED ? size_t(kChunk) * BV * 2 : align16(size_t(kChunk) * BVP * 2));  // KT: [C][K]
  static constexpr size_t gam = Kt + (KT ? tile_k : 0);                      // e^γ f32 [K]
  static constexpr size_t rows = gam + K * 4;                                  // GATE: f32 [2][C]
  static constexpr size_t rbeta = rows + (GATE ? kChunk * 2 * 4 : 0);          // FUSED: β of the rows f32 [C]
  static constexpr size_t span = rbeta + (FUSED ? kChunk * 4 : 0);             // ChunkSpan
  static constexpr size_t bytes = (span + 16 + 1023) / 1024 * 1024;
  static_assert(!FUSED || BV % 64 == 0, "the fused stage takes whole panels of v");
  static_assert(!KT || (FUSED && !GATE), "K ⊙ Γ: the fused stage of channel gates");

  __device__ static void prefetch(char* st, const DeltaParams& p, int c, ChunkSpan sp, int h, int v0, int V) {
    const int tok0 = sp.tok0, len = sp.len;
    if (threadIdx.x == 0) *reinterpret_cast<ChunkSpan*>(st + span) = sp;
    const int64_t strideK = int64_t(p.H) * K, baseK = (int64_t(tok0) * p.H + h) * K;
    const int64_t baseC = (int64_t(tok0) * p.H + h) * kChunk, strideC = int64_t(p.H) * kChunk;
    auto bf = [&](size_t off) { return reinterpret_cast<bf16_t*>(st + off); };
    if constexpr (FUSED) async_tile_sw128<kChunk, kChunk>(bf(W), p.Tbeta + baseC, strideC, len);
    else async_tile_sw128<kChunk, K>(bf(W), p.W + baseK, strideK, len);
    async_tile_sw128<kChunk, K>(bf(Kb), (GATE ? p.k : p.Kg) + baseK, strideK, len);
    if constexpr (KT) async_tile_sw128<kChunk, K>(bf(Kt), p.W + baseK, strideK, len);
    if constexpr (OUTPUT) {
      async_tile_sw128<kChunk, K>(bf(Qh), (GATE ? p.q : p.Qg) + baseK, strideK, len);
      async_tile_sw128<kChunk, kChunk>(bf(P), p.P + baseC, strideC, len);
    }
    prefetch_slice(st, p, c, sp, h, v0, V);
  }

  // This V-slice's own part of the stage (U or v, e^γ, GATE's rows): cp.async.
  __device__ static void prefetch_slice(char* st, const DeltaParams& p, int c, ChunkSpan sp, int h, int v0, int V) {
    const int tok0 = sp.tok0, len = sp.len;
    auto bf = [&](size_t off) { return reinterpret_cast<bf16_t*>(st + off); };
    if constexpr (FUSED)
      async_tile_sw128<kChunk, BV>(bf(U), (KT == kKtYw ? p.U : p.v) + (int64_t(tok0) * p.H + h) * V + v0, int64_t(p.H) * V, len);
    else
      async_tile<kChunk, BV * 2>(st + U, BVP * 2, p.U + (int64_t(tok0) * p.H + h) * V + v0, int64_t(p.H) * V * 2, len);
    async_tile<1, K * 4>(st + gam, 0, p.gexp + (int64_t(c) * p.H + h) * K, 0, 1);
    if constexpr (GATE) async_tile<1, kChunk * 2 * 4>(st + rows, 0, p.gate_rows + (int64_t(c) * p.H + h) * 2 * kChunk, 0, 1);
    if constexpr (FUSED)
      if (p.row_betas) async_tile<1, kChunk * 4>(st + rbeta, 0, row_betas_of(p, c, h), 0, 1);
  }

  // The tiles every V-slice reads (W, K̄; OUTPUT: Q̂, P), 64-channel boxes of 64 tokens, split
  // among the cluster's `slices` CTAs and multicast to all of them, completing on `bar` at the same
  // offset in each (whose owner expects all of them: tile_bytes). Thread 0 of each CTA issues.
  static constexpr int kBoxes = (OUTPUT ? 3 : 2) * (K / 64) + (OUTPUT ? 1 : 0);
  static constexpr uint32_t tile_bytes = uint32_t(kBoxes) * kChunk * 64 * 2;
  // Shared box b: tile b / (K / 64) (W, K̄, Q̂, then P, one panel), its panel b % (K / 64): the map,
  // the box's offset in the stage and its first channel.
  struct SharedBox {
    const CUtensorMap* map;
    size_t off;
    int channel;
  };
  __device__ static SharedBox shared_box(const tma::StateMaps& maps, int b) {
    constexpr int kp = K / 64;  // panels of a K-wide tile
    const int t = b / kp, panel = b % kp;
    return {t == 0 ? &maps.W : t == 1 ? &maps.Kb : t == 2 ? &maps.Qh : &maps.P,
            (t == 0 ? W : t == 1 ? Kb : t == 2 ? Qh : P) + size_t(panel) * kChunk * 64 * 2, 64 * panel};
  }
  __device__ static void multicast_tiles(char* st, const tma::StateMaps& maps, int tok0, int h, uint64_t* bar, int rank,
                                         int slices) {
    static_assert(!FUSED, "the fused stage's W slot holds 𝒯 Diag(β)");
    const uint16_t all = uint16_t((1u << slices) - 1);
    for (int b = rank; b < kBoxes; b += slices) {
      const SharedBox x = shared_box(maps, b);
      tma::load_box_multicast(st + x.off, x.map, x.channel, h, tok0, bar, all);
    }
  }

  // Beside wy_prep (p.beside_maps: KDA's and GDN2's pass): thread 0 issues the whole chunk's shared
  // tiles as boxes on `bar` (the slice's own part stays cp.async); a partial chunk takes prefetch.
  static constexpr bool kBesideBoxes = OUTPUT && !FUSED && !KT;
  __device__ static void prefetch_beside(char* st, const DeltaParams& p, int c, ChunkSpan sp, int h, int v0, int V,
                                         uint64_t* bar) {
    static_assert(kBesideBoxes, "boxes of W, K̄, Q̂ and P");
    if (sp.len < kChunk) {
      if (threadIdx.x == 0) tma::mbar_arrive_expect(bar, 0);
      return prefetch(st, p, c, sp, h, v0, V);
    }
    if (threadIdx.x == 0) {
      *reinterpret_cast<ChunkSpan*>(st + span) = sp;
      tma::fence_proxy_async_global();  // wy_prep's stores, acquired through its flags
      tma::mbar_arrive_expect(bar, tile_bytes);
#pragma unroll
      for (int b = 0; b < kBoxes; ++b) {
        const SharedBox x = shared_box(*p.beside_maps, b);
        tma::load_box(st + x.off, x.map, x.channel, h, sp.tok0, bar);
      }
    }
    prefetch_slice(st, p, c, sp, h, v0, V);
  }

  // Rows [len, C) of K̄ to zero: a box runs on into the next sequence's tokens, and K̄ᵀE must not
  // take them (W's, Q̂'s and P's rows there reach no stored value: P is lower triangular).
  __device__ static void clear_tail_rows(char* st, int len) {
    if (len >= kChunk) return;
    constexpr int kPieces = K / 8;  // 16-byte pieces of a row, over its K / 64 panels
    for (int i = threadIdx.x; i < (kChunk - len) * kPieces; i += kThreads) {
      const int r = len + i / kPieces, piece = i % kPieces;
      *reinterpret_cast<uint4*>(st + Kb + (size_t(piece / 8) * kChunk * 64 + size_t(r) * 64 + (piece % 8) * 8) * 2) =
          make_uint4(0, 0, 0, 0);
    }
  }
};

// Stages, then Hᵀ [BV][K] and Eᵀ [BV][C] (FUSED: and (V − Γ ⊙ K H)ᵀ [BV][C]; GATE with OUTPUT: and
// (e^{γ−G} ⊙ E)ᵀ [BV][C], which the replay keeps in Eᵀ's place: P E is the only other reader of
// Eᵀ); 1 KB for aligning the dynamic base to 1024 bytes. The output
// pass (Q̂, P in its stages) runs one CTA an SM with three stages where they fit; the replay two
// CTAs an SM with two stages each (its 256 CTAs at (8, 2048, 16) fill one wave); V-slices of 128
// one CTA.
// KT: Dᵀ in Eᵀ's place (each warpgroup reads its own half of D's columns and writes the same half
// of E after its product has waited), so that two stages with K ⊙ Γ fit at V-slices of 128.
template <int K, int V, int BV, bool OUTPUT, bool FUSED = false, bool GATE = false, bool CLUSTER = false, int KT = 0>
struct StateFwdShape {
  using S = WgStateStage<K, BV, OUTPUT, FUSED, GATE, KT>;
  static constexpr int ctas_per_sm = !OUTPUT && BV <= 64 ? 2 : 1;
  static constexpr size_t state_bytes = size_t(BV) * K * 2, e_bytes = size_t(BV) * kChunk * 2;
  static constexpr size_t d_bytes = FUSED && !KT ? e_bytes : 0;
  static constexpr size_t gate_bytes = GATE && OUTPUT ? e_bytes : 0;
  static constexpr int stages_fit =
      int((227 * 1024 / ctas_per_sm - 2048 - state_bytes - e_bytes - d_bytes - gate_bytes) / S::bytes);
  static constexpr int stages = stages_fit >= 3 ? 3 : 2;
  static constexpr size_t Ht = stages * S::bytes, Et = Ht + state_bytes, Dt = KT ? Et : Et + e_bytes;
  static constexpr size_t Es = Et + e_bytes + d_bytes;     // GATE and OUTPUT
  static constexpr size_t bars = Es + gate_bytes;          // CLUSTER: a stage's mbarrier each
  static constexpr size_t total = 1024 + bars + (CLUSTER ? 8 * stages : 0);
  static_assert(stages_fit >= 2, "state_fwd needs two stages");
  static_assert(ctas_per_sm * (total + 1024) <= 228 * 1024, "state_fwd's shared memory no longer fits its CTAs an SM");
};

// state_fwd_kernel<VAR, K, V, BV, OUTPUT, STORE>'s layout (its launcher sizes shared memory by it).
// SGATE: GDN's Save forward with row gates (its launcher's choice: p.gate_rows set). KFUSE: the
// Recompute forward of channel gates forming E in the pass (kfuse in delta_cuda.cu's forward:
// p.Tbeta set): KDA from 𝒯 Diag(β), K ⊙ Γ and v; GDN2 from 𝒯, Y_W and Y_U.
template <int VAR, int K, int V, int BV, bool OUTPUT, bool STORE, bool CLUSTER = false, bool SGATE = false,
          bool KFUSE = false>
using StateFwdLayout = StateFwdShape<K, V, BV, OUTPUT, fused_state_pass(VAR, K, V, OUTPUT, STORE, BV) || KFUSE,
                                     fused_gate(VAR, OUTPUT, STORE, BV) || SGATE, CLUSTER,
                                     KFUSE ? (VAR == kGDN2 ? kKtYw : kKtGammaK) : 0>;

// Stores rows r < valid of a warpgroup's m64nN fragment to dst[r * ld + c] as bf16, times alpha.
// A warp's 16 rows of it are the mma fragment layout (acc[4 j + e]: n8 tile j, element e), so
// frag_store_global's 16-byte rows serve it.
template <int N>
__device__ __forceinline__ void wg_store_rows(const float (&acc)[N / 2], bf16_t* dst, int64_t ld, int valid, float alpha) {
  frag_store_global(reinterpret_cast<const float(&)[1][N / 8][4]>(acc), dst, ld, 16 * ((threadIdx.x >> 5) & 3), 0, valid, alpha);
}

// Barrier `id` (1..15) over the 128 threads of the calling warpgroup.
__device__ __forceinline__ void warpgroup_sync(int id) { asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory"); }

// Where a warpgroup state kernel's block works (state_fwd, state_bwd_wg): sequence n, head h,
// V-slice [v0, v0 + BV); warpgroup wgi holds state rows [srow0, srow0 + 64) when holds_state, the
// first of them at state_at in a [N][H][K][V] state tensor.
template <int K, int V, int BV>
struct WgStateBlock {
  int n, h, v0, wgi, srow0;
  bool holds_state;
  int64_t state_at;
  __device__ explicit WgStateBlock(int H)
      : n(blockIdx.x / (V / BV)), h(blockIdx.y), v0((blockIdx.x % (V / BV)) * BV), wgi(threadIdx.x >> 7),
        srow0(64 * wgi), holds_state(wgi < K / 64), state_at((int64_t(n) * H + h) * K * V + v0 + int64_t(srow0) * V) {}
  // ... for the whole-V slice of sequence seq and head hh (a CTA whose pair is not its blockIdx's).
  __device__ WgStateBlock(int H, int seq, int hh)
      : n(seq), h(hh), v0(0), wgi(threadIdx.x >> 7), srow0(64 * wgi), holds_state(wgi < K / 64),
        state_at((int64_t(n) * H + h) * K * V + int64_t(srow0) * V) {
    static_assert(BV == V, "one slice a pair");
  }
  // The warpgroup's fp32 fragment of its state rows, from src (zero where src is null).
  __device__ void load_state(float (&acc)[BV / 2], const float* src) const {
    wg::frag_for_each<BV>(acc, [&](int r, int cc, float& x) {
      x = holds_state && src ? src[state_at + int64_t(r) * V + cc] : 0.f;
    });
  }
  // ... of the state at `at` of a [*][H][K][V] tensor: state_of(seq, H) is sequence seq's (the
  // segment scan's passes, whose sequences are segments, read their sequence's h0 and write its
  // final state). (load_state, and the plain passes' store of ht, keep their own code: written
  // through these, 85-99 of each translation unit's kernels compiled differently.)
  __device__ int64_t state_of(int seq, int H) const { return (int64_t(seq) * H + h) * K * V + v0 + int64_t(srow0) * V; }
  __device__ void load_state_at(float (&acc)[BV / 2], const float* src, int64_t at) const {
    wg::frag_for_each<BV>(acc, [&](int r, int cc, float& x) { x = holds_state && src ? src[at + int64_t(r) * V + cc] : 0.f; });
  }
  // The identity's rows (a map's start, K = V).
  __device__ void load_identity(float (&acc)[BV / 2]) const {
    wg::frag_for_each<BV>(acc, [&](int r, int cc, float& x) { x = holds_state && srow0 + r == v0 + cc ? 1.f : 0.f; });
  }
  // The fragment into dst's state at `at` (nothing where dst is null).
  __device__ void store_state_at(float (&acc)[BV / 2], float* dst, int64_t at) const {
    if (holds_state && dst) wg::frag_for_each<BV>(acc, [&](int r, int cc, float& x) { dst[at + int64_t(r) * V + cc] = x; });
  }
};

// The dynamic shared memory's base rounded up to 1024 bytes (swizzled tiles; the layouts reserve
// the 1 KB).
__device__ __forceinline__ char* align_1024(char* raw) { return raw + ((1024 - (smem_addr(raw) & 1023)) & 1023); }

// Phases of a state_fwd step for REWY_KERNEL_TIMING=2 (thread 0, warpgroup 0's view), summed
// over the steps of every V-slice: the wait for the step's tiles, Hᵀ to shared memory, E = U − W H
// (beside warpgroup 1's Q̂ H), then K̄ᵀE (beside P E and the output).
inline constexpr const char* kStateFwdPhases[] = {"wait", "H^T", "E|QH", "KE|PE,o"};

// seq_chunk_loop for a cluster of the V / BV slice CTAs of one (sequence, head): each stage's
// shared tiles land once from L2 for the whole cluster (S::multicast_tiles, on the stage's
// mbarrier in `full` [NS]), the slice's own part by cp.async. A stage is refilled only once every
// CTA of the cluster has finished the step that read it: a cluster barrier between steps (its
// arrive after body's closing block barrier, its wait before the refill).
template <class S, int NS, class Body>
__device__ __forceinline__ void seq_chunk_loop_multicast(char* stages, uint64_t* full, const DeltaParams& p,
                                                         const tma::StateMaps& maps, int n, int h, int v0, int V,
                                                         int slices, Body&& body) {
  const int c_begin = p.seq_chunk[n], count = p.seq_chunk[n + 1] - c_begin;
  const int rank = int(tma::cluster_rank());
  auto span = [&](int i) { return i < count ? ChunkSpan{p.chunk_tok[c_begin + i], p.chunk_len[c_begin + i]} : ChunkSpan{0, 0}; };
  auto stage = [&](int i) { return stages + (i % NS) * S::bytes; };
  auto refill = [&](int i, ChunkSpan sp) {  // stage i % NS with chunk i
    char* const st = stage(i);
    if (threadIdx.x == 0) {
      *reinterpret_cast<ChunkSpan*>(st + S::span) = sp;
      tma::mbar_arrive_expect(&full[i % NS], S::tile_bytes);
      S::multicast_tiles(st, maps, sp.tok0, h, &full[i % NS], rank, slices);
    }
    S::prefetch_slice(st, p, c_begin + i, sp, h, v0, V);
  };
  if (threadIdx.x == 0) {
    for (int i = 0; i < NS; ++i) tma::mbar_init(&full[i], 1);
    tma::fence_barrier_init();
  }
  tma::cluster_arrive();  // every CTA's barriers initialised before any box lands in it
  tma::cluster_wait();
#pragma unroll
  for (int i = 0; i < NS - 1; ++i) {
    if (i < count) refill(i, span(i));
    cp_async_commit();
  }
  ChunkSpan ahead = span(NS - 1);
  __syncthreads();  // the prologue's spans before step 0 reads its own (as seq_chunk_loop)
  for (int i = 0; i < count; ++i) {
    const int j = i + NS - 1;
    if (i > 0) tma::cluster_wait();  // every CTA is done with step i − 1, whose stage chunk j takes
    if (j < count) refill(j, ahead);
    ahead = span(j + 1);
    cp_async_commit();
    cp_async_wait<NS - 1>();
    tma::mbar_wait(&full[i % NS], (i / NS) & 1);
    S::clear_tail_rows(stage(i), reinterpret_cast<const ChunkSpan*>(stage(i) + S::span)->len);
    body(c_begin + i, stage(i));
    tma::cluster_arrive();
  }
  if (count > 0) tma::cluster_wait();
  cp_async_wait<0>();
}

// Forward state pass. OUTPUT: writes o (forward). STORE: writes E and the state snapshots Hs
// (Save policy, backward replay). ht when p.ht is set. CLUSTER: the block is one of a cluster of
// the pair's V / BV slices, which share each stage's W, K̄, Q̂ and P by TMA multicast (maps).
// Beside wy_prep, thread 0 at the end of step i (before its last barrier) of a sequence whose
// chunks are c_begin + [0, count): every kFenceEvery steps, the flags of the chunks the next
// kFenceEvery steps issue (i + NS on), read relaxed and together, waited for where not set, then
// one fence.acquire.gpu for all of them (the block barrier after it orders every thread's copies).
// (fence.acq_rel.gpu, before: MEMBAR.ALL.GPU, which waits for thread 0's stores of O, then
// CCTL.IVALL; fence.acquire.gpu is CCTL.IVALL alone. Recompute forward at (2, 8192, 16) and (1,
// 32768, 32) 1.019x / 1.025x DeltaNet, 1.017x / 1.021x KDA, 1.015x / 1.020x GDN2, two rounds each;
// acquire loads of the flags and no fence lost, 0.98x: they are one L2 round trip after another.
// H100, 2026-12-06, experiments fenceacq and flagacq, docs/measurements/2026-12-06-s62/call5/.)
template <int NS>
__device__ __forceinline__ void prep_fence_point(const DeltaParams& p, int i, int c_begin, int count, int h) {
  prep_lead_step(p);
  if (i % kFenceEvery != 0 || i + NS >= count) return;
  unsigned set[kFenceEvery];
#pragma unroll
  for (int k = 0; k < kFenceEvery; ++k)
    set[k] = i + NS + k < count ? load_relaxed(p.prep_done + int64_t(c_begin + i + NS + k) * p.H + h) : 1u;
#pragma unroll
  for (int k = 0; k < kFenceEvery; ++k)
    if (set[k] == 0) wait_prep_flag(p, c_begin + i + NS + k, h);
  fence_acquire_gpu();
}

// The decay cut's pass (WARM): this CTA's (segment, head), taken in the order CTAs start
// (DeltaParams::seg_flags' ticket), segment-major: a look-back waits only on a CTA that started
// before it. (The order CTAs start in need not be blockIdx's.)
template <int K, int V, int BV>
__device__ __forceinline__ WgStateBlock<K, V, BV> warm_state_block(const DeltaParams& p) {
  __shared__ unsigned ticket;
  if (threadIdx.x == 0) ticket = atomicAdd(p.seg_flags + int64_t(p.num_seqs) * p.H + kSegTicket, 1u);
  __syncthreads();
  return WgStateBlock<K, V, BV>(p.H, int(ticket / unsigned(p.H)), int(ticket % unsigned(p.H)));
}
// ... a look-back's start: thread 0 waits for segment n − 1's flag (kErrSegmentStall where it
// never comes: the results are then void and the call raises), a block barrier orders the loads
// after its acquire, and they read through L2 (the state was stored by another SM in this grid).
template <int K, int V, int BV>
__device__ __forceinline__ void look_back(const DeltaParams& p, const WgStateBlock<K, V, BV>& blk, float (&acc)[BV / 2]) {
  if (threadIdx.x == 0)
    spin_until(p, [&] { return load_acquire(p.seg_flags + int64_t(blk.n - 1) * p.H + blk.h) != 0; },
               p.seg_flags + int64_t(p.num_seqs) * p.H + kSegStalled, kErrSegmentStall);
  __syncthreads();
  const int64_t at = blk.state_of(blk.n - 1, p.H);
  wg::frag_for_each<BV>(acc, [&](int r, int cc, float& x) { x = blk.holds_state ? __ldcg(p.seg_end + at + int64_t(r) * V + cc) : 0.f; });
}
// ... its end state for a successor that looks back: stored, then (after a block barrier) flagged
// out by thread 0's release.
template <int K, int V, int BV>
__device__ __forceinline__ void publish_end_state(const DeltaParams& p, const WgStateBlock<K, V, BV>& blk, float (&acc)[BV / 2]) {
  blk.store_state_at(acc, p.seg_end, blk.state_at);
  __syncthreads();
  if (threadIdx.x == 0) count_release(p.seg_flags + int64_t(blk.n) * p.H + blk.h);
}

// BESIDE: wy_prep runs beside as this grid's programmatic dependent (Config::prep_beside). There
// (the few-pair shapes, where a step is latency-bound) the state's Hᵀ for the next step is stored
// at the end of a step, after its update, and the block barrier that ends the step also publishes
// the next stage's tiles (each thread waits for its copies of chunk i + 1 before it): one block
// barrier a step fewer (the first step stores Hᵀ of h0 as before). Forward at (2, 8192, 16),
// (1, 16384, 16), (1, 32768, 32): 1.02-1.06x every variant; at the many-pair shapes, whose wait
// then has one chunk fewer in flight, 0.96-0.99x, so the other passes keep the barrier (H200,
// 2026-12-04, experiment hend, docs/measurements/2026-12-04-s41/call1/).
// FHALF (the fused forward at V-slices of 128; experiment `fhalf` at every slice): each warpgroup forms its own half of the columns
// of D, Q̂ H, E and O, as the replay does with D and E, behind its own named barriers; the block
// barrier before K̄ᵀE stays (the state is held by rows). In the unfused output pass (KDA's and
// GDN2's at V-slices of 128 where they read W and U; experiment `uhalf`) the same halves of
// E = U − W H, Q̂ H and O: the step's chain loses half of P E.
// MAP (the segment scan's map pass, Config::scan_segments; kernels/delta/segments.h): the fused
// replay's step (OUTPUT false, STORE true) without its stores, the call's sequences being
// segments; blockIdx.z = 0 runs each segment from zero (p.h0 null) to its end state L in p.ht,
// z = 1 from the identity with v taken as 0 to its map Φ in p.seg_maps.
// PLANES (the segment scan's two-pass form, SegmentForm::TwoPass): the fused forward at V-slices of
// V = K by column halves, two planes: z = 0 runs each segment from its sequence's h0 where it is
// the first (p.seg_seq) and from zero elsewhere, writing its outputs to p.o and its end state to
// p.ht; z = 1 runs every other segment from the identity with v taken as 0, writing Y (that
// plane's outputs) to p.seg_y and its map Φ to p.seg_maps. segment_correct_kernel then adds Y H_in.
// WARM (the decay cut, SegmentForm::DecayCut): the same fused forward at whole-V slices, each
// segment from its plan (p.seg_plan: from zero at its cut, from its sequence's h0 where it is the
// first, or from its predecessor's end state), outputs from its own first chunk on, its end state
// for a successor that looks back, the final state by its sequence's last segment. In the replay
// (OUTPUT false, STORE: the backward's cut, Config::backward_cut_segments) the fused replay's step
// at whole-V slices, each segment from zero at its cut or from h0, the states Hs, E and the
// chunk's count (by p.count_weight) for its own chunks alone; no look-back (the plan's word runs
// the default replay where a segment would), no end state.
template <int VAR, int K, int V, int BV, bool OUTPUT, bool STORE, bool CLUSTER, bool SGATE, bool BESIDE = false,
          bool FHALF = false, bool KFUSE = false, bool MAP = false, bool PLANES = false, bool WARM = false>
__device__ __forceinline__ void state_fwd_body(const DeltaParams& p, const tma::StateMaps* maps) {
  static_assert(!BESIDE || (OUTPUT && !CLUSTER && !SGATE), "wy_prep beside the plain forward pass");
  static_assert(!SGATE || (VAR == kGDN && OUTPUT && STORE), "saved row gates: GDN's Save forward");
  static_assert(!KFUSE || (VT<VAR>::vec_gate && OUTPUT && !STORE && !CLUSTER && !BESIDE && BV % 64 == 0),
                "KFUSE: the Recompute forward of channel gates, wy_prep before it");
  constexpr bool kFused = fused_state_pass(VAR, K, V, OUTPUT, STORE, BV) || KFUSE;
  static_assert(!MAP || (fused_replay(VAR, K, V, OUTPUT, STORE, BV) && K == V && !CLUSTER && !SGATE && !BESIDE && !FHALF &&
                         !KFUSE),
                "MAP: the fused replay's step, Φ a K×K state");
  static_assert(!PLANES || (kFused && OUTPUT && !STORE && FHALF && BV == V && K == V && !CLUSTER && !SGATE && !BESIDE &&
                            !MAP),
                "PLANES: the fused forward by column halves at whole-V slices (KFUSE's too), Φ a K×K state");
  static_assert(!WARM || (kFused && ((OUTPUT && !STORE && FHALF) || (!OUTPUT && STORE && !FHALF)) && BV == V && !CLUSTER &&
                          !SGATE && !BESIDE && !KFUSE && !MAP && !PLANES),
                "WARM: the fused forward by column halves, or the fused replay, at whole-V slices");
  static_assert(!FHALF || (OUTPUT && (kFused || (!STORE && !CLUSTER && !SGATE && !fused_gate(VAR, OUTPUT, STORE, BV)))),
                "FHALF: the fused forward, or the unfused output pass without row gates");
  constexpr bool kGate = fused_gate(VAR, OUTPUT, STORE, BV) || SGATE;
  constexpr bool HEND = BESIDE && !STORE;  // Hᵀ at the step's end (above; the Recompute forward's)
  using L = StateFwdLayout<VAR, K, V, BV, OUTPUT, STORE, CLUSTER, SGATE, KFUSE>;
  using S = typename L::S;
  using wg::Major;
  static_assert(kThreads == 256 && K % 64 == 0 && BV % 16 == 0, "two warpgroups; 64-row state blocks");
  if constexpr ((OUTPUT && !STORE) || (STORE && !OUTPUT && !MAP))  // (forward passes; the backward's replay)
    if (!on_path(p.path_flag, p.path_value)) return;  // the decay cut's other path runs (DeltaParams::path_flag)
  extern __shared__ __align__(16) char raw[];
  char* const smem = align_1024(raw);
  bf16_t* const Ht = reinterpret_cast<bf16_t*>(smem + L::Ht);
  bf16_t* const Et = reinterpret_cast<bf16_t*>(smem + L::Et);
  const WgStateBlock<K, V, BV> blk = [&] {
    if constexpr (WARM && OUTPUT) return warm_state_block<K, V, BV>(p);
    else return WgStateBlock<K, V, BV>(p.H);
  }();
  const int n = blk.n, h = blk.h, v0 = blk.v0, wgi = blk.wgi, srow0 = blk.srow0;
  const bool holds_state = blk.holds_state;
  const int64_t strideV = int64_t(p.H) * V, state_at = blk.state_at;
  if constexpr (MAP)
    if (p.seg_last && p.seg_last[n]) return;  // no final state kept: the last segment's map serves nothing
  bf16_t* out = p.o;  // PLANES: z = 1 writes Y
  if constexpr (PLANES) {
    if (blockIdx.z == 1 && p.seg_seq[n] >= 0) return;  // a first segment runs from h0: no map, no Y
    if (blockIdx.z == 1) out = p.seg_y;
  }
  int warm_from = 0, warm_out = 0, warm_plan = 0;  // WARM: the first chunk run, the first with outputs, the plan
  if constexpr (WARM) {
    warm_plan = p.seg_plan[int64_t(n) * p.H + h];
    warm_out = p.seq_chunk[n];
    warm_from = warm_plan >= 0 ? warm_plan : warm_out;
  }

  // The backward's replay: state_bwd may start beside it (LaunchInfo::overlap_passes). The forward
  // beside wy_prep (p.prep_done): wy_prep is this grid's dependent.
  if constexpr (STORE && !OUTPUT && !MAP) pdl_launch_dependents();
  if constexpr (BESIDE) pdl_launch_dependents();  // (seq_chunk_loop and step acquire wy_prep's flags)
  const int c_first = BESIDE ? p.seq_chunk[n] : 0;
  const int c_count = BESIDE ? p.seq_chunk[n + 1] - c_first : 0;
  float Hacc[BV / 2];  // rows [srow0, +64) of the K×BV state slice, fp32
  if constexpr (MAP) {  // z = 1: Φ, from the identity (v as 0 below)
    if (blockIdx.z == 1)
      blk.load_identity(Hacc);
    else
      blk.load_state(Hacc, p.h0);
  } else if constexpr (WARM) {  // from zero at the cut, the sequence's h0, or the predecessor's end
    if (OUTPUT && warm_plan == kPlanLookBack)
      look_back(p, blk, Hacc);
    else
      blk.load_state_at(Hacc, warm_plan == kPlanFromH0 ? p.h0 : nullptr, blk.state_of(p.seg_owner[n], p.H));
  } else if constexpr (PLANES) {  // z = 1 as MAP's; z = 0 from the sequence's h0 (a first segment) or zero
    const int seq = p.seg_seq[n];
    if (blockIdx.z == 1)
      blk.load_identity(Hacc);
    else
      blk.load_state_at(Hacc, seq >= 0 ? p.h0 : nullptr, blk.state_of(seq >= 0 ? seq : 0, p.H));
  } else {
    blk.load_state(Hacc, p.h0);
  }

  phase_start(p.phase_cycles);
  auto step = [&](int c, char* st) {
    const bf16_t* const W = reinterpret_cast<const bf16_t*>(st + S::W);
    const bf16_t* const Kb = reinterpret_cast<const bf16_t*>(st + S::Kb);
    const bf16_t* const KH = KFUSE ? reinterpret_cast<const bf16_t*>(st + S::Kt) : Kb;  // K H's K: KFUSE's K ⊙ Γ or Y_W
    const bf16_t* const Qh = reinterpret_cast<const bf16_t*>(st + S::Qh);
    const bf16_t* const P = reinterpret_cast<const bf16_t*>(st + S::P);
    const bf16_t* const Us = reinterpret_cast<const bf16_t*>(st + S::U);
    const float* const gam = reinterpret_cast<const float*>(st + S::gam);
    const ChunkSpan sp = *reinterpret_cast<const ChunkSpan*>(st + S::span);
    const int tok0 = sp.tok0, len = sp.len;
    const int64_t baseV = (int64_t(tok0) * p.H + h) * V + v0;
    const float* const row_gates = reinterpret_cast<const float*>(st + S::rows);  // GATE: e^{G_i}, then e^{γ−G_i}
    // GATE: K̄ᵀE = Kᵀ (e^{γ−G} ⊙ E), (e^{γ−G} ⊙ E)ᵀ where the state update reads it: its own tile
    // in the output pass (P E reads the plain Eᵀ), Eᵀ's place in the replay.
    bf16_t* const Edecayed = OUTPUT ? reinterpret_cast<bf16_t*>(smem + L::Es) : Et;
    phase_mark(p.phase_cycles, 0);  // the step's tiles have landed (thread 0's copies)

    if (!HEND || c == c_first) {
      if (holds_state) {  // Hᵀ for this chunk's products; STORE: the bf16 state entering the chunk
        wg::store_transposed<BV>(Hacc, Ht, srow0);
        if constexpr (STORE && !MAP)
          if (!WARM || c >= warm_out)  // (WARM: not in the cut's warm-up chunks; c is uniform over the block)
            wg_store_rows<BV>(Hacc, p.Hs + (int64_t(c) * p.H + h) * K * V + v0 + int64_t(srow0) * V, V, 64, 1.f);
      }
      wg::fence_smem_writes();  // Hᵀ and this thread's landed copies, for wgmma's async proxy
      __syncthreads();
    }  // (HEND after the first step: Hᵀ and this stage's copies were published by the last step's end)
    phase_mark(p.phase_cycles, 1);
    float acc[BV / 2];
    if constexpr (kFused) {
      // E = U − W H = 𝒯 Diag(β) (V − Γ ⊙ K H) (U = 𝒯 Diag(β) V, W = 𝒯 Diag(β Γ) K; GDN's Γ = e^G of
      // the rows, 1 for DeltaNet): W is never formed. 𝒯 Diag(β) in W's slot, k (K̄ = K for
      // DeltaNet) in K̄'s, v in U's (swizzled [C][BV]). K H on warpgroup 0 beside Q̂ H, then
      // 𝒯 Diag(β) D on both warpgroups, half of E's columns each: 8 products of 64×64×64 a step
      // instead of 10 with W and U formed, no −W tile (16 KB of stores a step), no column scaling
      // of 𝒯 Diag(β) by e^G (GDN), and the step's chain K H → D → E → K̄ᵀE instead of
      // −W → E → K̄ᵀE with −W the widest product. Recompute forward 1.03-1.25x GDN, 0.996-1.05x
      // DeltaNet (H200, 2026-12-04, experiment kh, docs/measurements/2026-12-04-s41/call1/). The
      // backward's replay (fused_replay) the same way, wy_replay then writing no U; there each
      // warpgroup takes half of D's columns (no Q̂ H beside), a block barrier fewer.
      bf16_t* const Dt = reinterpret_cast<bf16_t*>(smem + L::Dt);  // (V − Γ ⊙ K H)ᵀ [BV][C]
      constexpr int BH = BV / 2;  // E's columns [wgi BH, + BH) = 𝒯 Diag(β) D on warpgroup wgi
      // D's columns [col0, + N) from a's K H there: D = V − Γ ⊙ K H (GATE: Γ = e^G of the rows,
      // raw k; else K̄ = K, Γ = 1), transposed into Dt. p.row_betas: Diag(β) D, W's slot holding 𝒯.
      auto form_d = [&](auto& a, int col0) {
        constexpr int N = 2 * int(std::extent_v<std::remove_reference_t<decltype(a)>>);
        const int r0 = wg::frag_row(), q = threadIdx.x & 3;
        const float g_lo = kGate ? row_gates[r0] : 1.f, g_hi = kGate ? row_gates[r0 + 8] : 1.f;
        const float* const rb = reinterpret_cast<const float*>(st + S::rbeta);
        const float b_lo = p.row_betas ? rb[r0] : 1.f, b_hi = p.row_betas ? rb[r0 + 8] : 1.f;
#pragma unroll
        for (int j = 0; j < N / 8; ++j)
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const int r = r0 + 8 * hh, cc = col0 + 8 * j + 2 * q;
            float2 vf = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(Us + wg::tile_offset<kChunk>(r, cc)));
            if constexpr (MAP || PLANES) vf = blockIdx.z == 1 ? make_float2(0.f, 0.f) : vf;  // Φ: v as 0
            const float g = hh ? g_hi : g_lo, b = hh ? b_hi : b_lo;
            a[4 * j + 2 * hh] = b * (vf.x - g * a[4 * j + 2 * hh]);
            a[4 * j + 2 * hh + 1] = b * (vf.y - g * a[4 * j + 2 * hh + 1]);
          }
        wg::store_transposed<N>(a, Dt + col0 * kChunk, 0);
        wg::fence_smem_writes();
      };
      float acch[BH / 2];  // FHALF: this warpgroup's half of Q̂ H's columns, then of O's
      if constexpr (!OUTPUT || FHALF) {
        // The replay (no Q̂ H beside), or FHALF: each warpgroup forms its own half of D's columns
        // and, behind its own barrier, the same half of E.
        float accd[BH / 2];
        wg::gemm_issue<BH, K, Major::K, Major::K, BV>(accd, KH, Ht + wgi * BH * wg::kPanel, false);
        if constexpr (FHALF) wg::gemm_issue<BH, K, Major::K, Major::K, BV>(acch, Qh, Ht + wgi * BH * wg::kPanel, false);
        wg::commit();
        wg::wait<0>();
        if constexpr (FHALF && kGate) wg::frag_for_each<BH>(acch, [&](int r, int, float& x) { x *= row_gates[r]; });
        if constexpr (FHALF && kGate)  // the products by e^G before P E's operand fence (else ptxas adds one: C7519)
#pragma unroll
          for (int i = 0; i < BH / 2; ++i) asm volatile("" : "+f"(acch[i]));
        form_d(accd, wgi * BH);
        warpgroup_sync(1 + wgi);  // this warpgroup's half of Dᵀ
      } else if (wgi == 0) {
        wg::gemm<BV, K, Major::K, Major::K>(acc, KH, Ht, false);
        form_d(acc, 0);
      } else {
        wg::gemm<BV, K, Major::K, Major::K>(acc, Qh, Ht, false);  // Q̂ H; GATE: q H, then its rows by e^G
        if constexpr (kGate) wg::frag_for_each<BV>(acc, [&](int r, int, float& x) { x *= row_gates[r]; });
      }
      if constexpr (OUTPUT && !FHALF) __syncthreads();  // Dᵀ complete
      float acce[BH / 2];
      wg::gemm<BH, kChunk, Major::K, Major::K>(acce, W, Dt + wgi * BH * kChunk, false);
      if constexpr (KFUSE) warpgroup_sync(1 + wgi);  // the warpgroup's half of Dᵀ is read: Eᵀ's goes there
      if constexpr (!kGate || OUTPUT) wg::store_transposed<BH>(acce, Et + wgi * BH * kChunk, 0);
      if constexpr (kGate) wg::store_transposed_row_scaled<BH>(acce, Edecayed + wgi * BH * kChunk, 0, row_gates + kChunk);
      if constexpr (STORE && !MAP)
        if (!WARM || c >= warm_out) wg_store_rows<BH>(acce, p.E + baseV + wgi * BH, strideV, len, 1.f);
      wg::fence_smem_writes();
      if constexpr (FHALF) {  // O's half = s (Q̂ H + P E) over this warpgroup's columns
        warpgroup_sync(1 + wgi);  // this warpgroup's half of Eᵀ
        if constexpr (WARM) {
          if (c >= warm_out) {  // (not in the cut's warm-up chunks; c is uniform over the block)
            wg::gemm<BH, kChunk, Major::K, Major::K>(acch, P, Et + wgi * BH * kChunk, true);
            wg_store_rows<BH>(acch, out + baseV + wgi * BH, strideV, len, p.scale);
          }
        } else {
          wg::gemm<BH, kChunk, Major::K, Major::K>(acch, P, Et + wgi * BH * kChunk, true);
          wg_store_rows<BH>(acch, out + baseV + wgi * BH, strideV, len, p.scale);
        }
      }
    } else if constexpr (FHALF) {  // E = U − W H, Q̂ H and O by column halves, one a warpgroup
      constexpr int BH = BV / 2;
      uint32_t u[BH / 4];  // U's fragment over this warpgroup's columns, loaded while the products run
      float acce[BH / 2], acch[BH / 2];
      wg::gemm_issue<BH, K, Major::K, Major::K, BV>(acce, W, Ht + wgi * BH * wg::kPanel, false);
      wg::gemm_issue<BH, K, Major::K, Major::K, BV>(acch, Qh, Ht + wgi * BH * wg::kPanel, false);
      wg::commit();
      wg::load_rows_packed<BH, S::BVP>(u, Us + wgi * BH);
      wg::wait<0>();
#pragma unroll
      for (int j = 0; j < BH / 4; ++j) {
        const float2 uf = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&u[j]));
        acce[2 * j] = uf.x - acce[2 * j];
        acce[2 * j + 1] = uf.y - acce[2 * j + 1];
      }
      wg::store_transposed<BH>(acce, Et + wgi * BH * kChunk, 0);
      wg::fence_smem_writes();
      warpgroup_sync(1 + wgi);  // this warpgroup's half of Eᵀ
      wg::gemm<BH, kChunk, Major::K, Major::K>(acch, P, Et + wgi * BH * kChunk, true);
      wg_store_rows<BH>(acch, p.o + baseV + wgi * BH, strideV, len, p.scale);
    } else if (wgi == 0) {  // E = U − W H
      uint32_t u[BV / 4];  // U's fragment, loaded while the products run
      wg::load_rows_packed<BV, S::BVP>(u, Us);
      wg::gemm<BV, K, Major::K, Major::K>(acc, W, Ht, false);
#pragma unroll
      for (int j = 0; j < BV / 4; ++j) {
        const float2 uf = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&u[j]));
        acc[2 * j] = uf.x - acc[2 * j];
        acc[2 * j + 1] = uf.y - acc[2 * j + 1];
      }
      if constexpr (kGate) {  // (e^{γ−G} ⊙ E)ᵀ first, it heads the step's chain; the output pass's P E reads Eᵀ
        wg::store_transposed_row_scaled<BV>(acc, Edecayed, 0, row_gates + kChunk);
        if constexpr (OUTPUT) wg::store_transposed<BV>(acc, Et, 0);
      } else {
        wg::store_transposed<BV>(acc, Et, 0);
      }
      if constexpr (STORE) wg_store_rows<BV>(acc, p.E + baseV, strideV, len, 1.f);
      wg::fence_smem_writes();
    } else if constexpr (OUTPUT) {
      wg::gemm<BV, K, Major::K, Major::K>(acc, Qh, Ht, false);  // Q̂ H; GATE: q H, then its rows by e^G
      if constexpr (kGate) wg::frag_for_each<BV>(acc, [&](int r, int, float& x) { x *= row_gates[r]; });
    }
    __syncthreads();  // Eᵀ complete
    phase_mark(p.phase_cycles, 2);
    // (Issuing P E and K̄ᵀE together and awaiting once measured slower at be15353: 380 -> 488 us at
    // V-slices of 16.)
    if constexpr (OUTPUT && !FHALF) {
      if (wgi == 1) {  // O = s (Q̂ H + P E)
        wg::gemm<BV, kChunk, Major::K, Major::K>(acc, P, Et, true);
        wg_store_rows<BV>(acc, p.o + baseV, strideV, len, p.scale);
      }
    }
    if (holds_state) {  // H ← e^γ ⊙ H + K̄ᵀ E (A = K̄ᵀ: the 64-column panel of K̄ holding these rows)
      wg::frag_for_each<BV>(Hacc, [&](int r, int, float& x) { x *= gam[srow0 + r]; });
      wg::gemm<BV, kChunk, Major::MN, Major::K>(Hacc, Kb + srow0 * kChunk, kGate ? Edecayed : Et, true);  // GATE: Kᵀ (e^{γ−G} ⊙ E)
      // HEND: the next step's Hᵀ (Ht's readers, the step's products with H, finished before the last barrier)
      if constexpr (HEND) wg::store_transposed<BV>(Hacc, Ht, srow0);
    }
    if constexpr (HEND) {
      cp_async_wait<L::stages - 2>();  // this thread's copies of the next chunk (seq_chunk_loop's commits)
      wg::fence_smem_writes();         // Hᵀ and those copies, for wgmma's async proxy
    }
    if constexpr (BESIDE)
      if (threadIdx.x == 0) prep_fence_point<L::stages>(p, c - c_first, c_first, c_count, h);
    __syncthreads();  // this stage, Hᵀ and Eᵀ are free for the next chunk
    // The backward's replay: this slice of chunk c's H (stored at the step's start) and E are out.
    if constexpr (STORE && !OUTPUT && !MAP && WARM) {
      if (c >= warm_out) count_cut_step(p, kReplayPass, c, h);
    } else if constexpr (STORE && !OUTPUT && !MAP) {
      count_step(p, kReplayPass, c, h);
    }
    phase_mark(p.phase_cycles, 3);
  };
  if constexpr (CLUSTER)
    seq_chunk_loop_multicast<S, L::stages>(smem, reinterpret_cast<uint64_t*>(smem + L::bars), p, *maps, n, h, v0, V,
                                           V / BV, step);
  else if constexpr (WARM)
    chunk_range_loop<S, L::stages, false, decltype(step)&>(smem, p, warm_from, p.seq_chunk[n + 1] - warm_from, h, v0, V,
                                                          step);
  else
    seq_chunk_loop<S, L::stages, false, decltype(step)&, BESIDE>(smem, p, n, h, v0, V, step);
  if constexpr (WARM && !OUTPUT) {
    // (the replay: no end state)
  } else if constexpr (WARM) {  // the sequence's final state, by its last segment; else the successor's start
    if (p.seg_last[n])
      blk.store_state_at(Hacc, p.ht, blk.state_of(p.seg_owner[n], p.H));
    else if (p.seg_plan[int64_t(n + 1) * p.H + h] == kPlanLookBack)
      publish_end_state(p, blk, Hacc);
  } else if constexpr (MAP || PLANES) {
    blk.store_state_at(Hacc, blockIdx.z == 1 ? p.seg_maps : p.ht, state_at);  // (Φ is a [K][K] state, K = V)
  } else if (holds_state && p.ht) {
    wg::frag_for_each<BV>(Hacc, [&](int r, int cc, float& x) { p.ht[state_at + int64_t(r) * V + cc] = x; });
  }
}

template <int VAR, int K, int V, int BV, bool OUTPUT, bool STORE, bool SGATE = false, bool BESIDE = false, bool FHALF = false,
          bool KFUSE = false, bool MAP = false, bool PLANES = false, bool WARM = false>
__global__ void __launch_bounds__(kThreads, (StateFwdLayout<VAR, K, V, BV, OUTPUT, STORE, false, SGATE, KFUSE>::ctas_per_sm))
    state_fwd_kernel(const DeltaParams p) {
  state_fwd_body<VAR, K, V, BV, OUTPUT, STORE, false, SGATE, BESIDE, FHALF, KFUSE, MAP, PLANES, WARM>(p, nullptr);
}

// The segment scan's scan over segments (SegmentScanParams): a CTA of K threads per (sequence,
// head, CS columns of V), thread r holding row r of the state's columns in fp32, the state's
// columns in shared memory for the products: per segment, K × CS × K multiply-adds, Φ_s's row r
// read by thread r. Sequential in the segments of a sequence (few: Config::scan_segments), so a
// CTA's time is its segments' count times one K×K by K×CS product. Each map is staged in shared
// memory by coalesced cp.async while the last one's product runs (two buffers, rows padded to
// K + 4 floats so that a quarter-warp's 16-byte reads of eight rows take eight bank groups), L_s's
// row loaded before the wait: 23.7 -> 17.3 µs at (1, 16384, 16) against thread r reading its row
// of Φ_s from global memory, 512 bytes apart across a warp (ncu, H100, 2026-12-05,
// docs/measurements/2026-12-05-s55/call3/ncu.txt). VAR gives each variant's translation unit a
// kernel of its own, as segment_correct_kernel's: shared by the four units, that kernel (50 KB,
// above the default limit that set_smem raises once a process) failed to launch, invalid argument,
// where KDA's unit ran it first in a process, and launched where DeltaNet's had (H100, 2026-12-05,
// docs/measurements/2026-12-05-s55/call4/).
template <int K, int CS>
struct SegmentScanLayout {
  static constexpr int kPitch = K + 4;
  static constexpr size_t phi_floats = size_t(K) * kPitch;
  static constexpr size_t total = (2 * phi_floats + size_t(K) * CS) * sizeof(float);
};
template <int VAR, int K, int V, int CS>
__global__ void __launch_bounds__(K) segment_scan_kernel(const SegmentScanParams a) {
  static_assert(CS % 4 == 0 && V % CS == 0 && K % 4 == 0, "16-byte column pieces");
  using L = SegmentScanLayout<K, CS>;
  extern __shared__ __align__(16) float scan_smem[];
  float* const Ps = scan_smem;                        // two [K][K + 4] maps
  float* const Hs = scan_smem + 2 * L::phi_floats;    // [K][CS]: the segment's start columns
  if (!on_path(a.path_flag, a.path_value)) return;  // (the decay cut's fallback, where WARM ran)
  const int n = blockIdx.x / a.H, h = blockIdx.x % a.H, c0 = blockIdx.y * CS, r = threadIdx.x;
  float acc[CS];
  const float* const h0 = a.h0 ? a.h0 + ((int64_t(n) * a.H + h) * K + r) * V + c0 : nullptr;
#pragma unroll
  for (int j = 0; j < CS; ++j) acc[j] = h0 ? h0[j] : 0.f;
  const int s_first = a.seg_first[n], s_end = a.seg_first[n + 1];
  // Whether segment s's product reads Φ_s: not the exact first segment, nor the last where no ht
  // is asked (the loop stops before it).
  const auto reads_map = [&](int s) {
    return s < s_end && !(a.first_exact && s == s_first) && (s + 1 < s_end || a.ht != nullptr);
  };
  const auto stage_map = [&](int s, int buf) {  // one cp.async group a call, empty where s reads none
    if (reads_map(s)) {
      const float* const src = a.Phi + (int64_t(s) * a.H + h) * K * K;
      float* const dst = Ps + buf * L::phi_floats;
      for (int i = r; i < K * K / 4; i += K) {
        const int row = i / (K / 4), c4 = 4 * (i % (K / 4));
        cp_async16(dst + row * L::kPitch + c4, src + int64_t(row) * K + c4, true);
      }
    }
    cp_async_commit();
  };
  stage_map(s_first, 0);
  for (int s = s_first, buf = 0; s < s_end; ++s, buf ^= 1) {
    const int64_t at = ((int64_t(s) * a.H + h) * K + r) * V + c0;
#pragma unroll
    for (int j = 0; j < CS; j += 4) {
      const float4 x = make_float4(acc[j], acc[j + 1], acc[j + 2], acc[j + 3]);
      *reinterpret_cast<float4*>(a.H_in + at + j) = x;
      *reinterpret_cast<float4*>(&Hs[r * CS + j]) = x;
    }
    if (s + 1 == s_end && !a.ht) break;  // (the map pass left the last segment's L and Φ out)
    stage_map(s + 1, buf ^ 1);           // (buffer buf ^ 1's last reader passed the loop's end barrier)
#pragma unroll
    for (int j = 0; j < CS; j += 4) {
      const float4 l = *reinterpret_cast<const float4*>(a.L + at + j);
      acc[j] = l.x, acc[j + 1] = l.y, acc[j + 2] = l.z, acc[j + 3] = l.w;
    }
    cp_async_wait<1>();  // Φ_s (its group is the one before the group just committed)
    __syncthreads();     // ... and Hs, from every thread
    const bool exact = a.first_exact && s == s_first;  // (uniform over the block) L is the end state, no Φ
    const float* const phi = Ps + buf * L::phi_floats + r * L::kPitch;
#pragma unroll 4
    for (int k4 = 0; k4 < (exact ? 0 : K / 4); ++k4) {
      const float4 f = *reinterpret_cast<const float4*>(phi + 4 * k4);
      const float fk[4] = {f.x, f.y, f.z, f.w};
#pragma unroll
      for (int e = 0; e < 4; ++e)
#pragma unroll
        for (int j = 0; j < CS; ++j) acc[j] = fmaf(fk[e], Hs[(4 * k4 + e) * CS + j], acc[j]);
    }
    __syncthreads();  // Hs and Φ_s's buffer are rewritten by the next segments
  }
  cp_async_wait<0>();  // (no copy outlives the block)
  if (a.ht) {
    float* const out = a.ht + ((int64_t(n) * a.H + h) * K + r) * V + c0;
#pragma unroll
    for (int j = 0; j < CS; j += 4)
      *reinterpret_cast<float4*>(out + j) = make_float4(acc[j], acc[j + 1], acc[j + 2], acc[j + 3]);
  }
}

// The segment scan's two-pass form (SegmentForm::TwoPass): O += Y H_in over every segment but
// each sequence's first (p.seg_seq), whose outputs the plane pass formed from h0. p's sequences
// are the segments, p.h0 their start states H_in [num segments][H][K][V] (the scan's). A CTA of
// one warpgroup takes up to G chunks of one (segment, head): H_inᵀ once to shared memory in bf16
// (the state passes' products read H so), then per chunk Y [C][K] to a swizzled tile, one
// m64nVk(K) product, O's bf16 values added in fp32 and the sum stored in bf16. grid: (segments ×
// groups, H), groups = ⌈the longest segment's chunks / G⌉.
template <int K, int V, int G>
struct SegmentCorrectLayout {
  static constexpr size_t y_bytes = size_t(kChunk) * K * 2, h_bytes = size_t(V) * K * 2;
  static constexpr size_t Y = 0, Ht = y_bytes, total = 1024 + y_bytes + h_bytes;
};
template <int VAR, int K, int V, int G>
__global__ void __launch_bounds__(128) segment_correct_kernel(const DeltaParams p, int groups) {
  static_assert(K % 64 == 0 && V % 16 == 0 && V <= 256 && K * 2 % 16 == 0, "64-row state blocks, 16-byte rows of Y");
  using L = SegmentCorrectLayout<K, V, G>;
  using wg::Major;
  const int n = blockIdx.x / groups, h = blockIdx.y;
  if (p.seg_seq[n] >= 0) return;  // the sequence's first segment: its outputs are final
  if (!on_path(p.path_flag, p.path_value)) return;  // (the decay cut's fallback, where WARM ran)
  const int c_begin = p.seq_chunk[n] + (blockIdx.x % groups) * G;
  const int c_end = min(c_begin + G, p.seq_chunk[n + 1]);
  if (c_begin >= c_end) return;
  extern __shared__ __align__(16) char raw[];
  char* const smem = align_1024(raw);
  bf16_t* const Yt = reinterpret_cast<bf16_t*>(smem + L::Y);   // [C][K] swizzled
  bf16_t* const Ht = reinterpret_cast<bf16_t*>(smem + L::Ht);  // H_inᵀ [V][K] swizzled
  {
    float acc[V / 2];
#pragma unroll
    for (int kb = 0; kb < K / 64; ++kb) {  // rows [64 kb, + 64) of H_in
      const float* const src = p.h0 + ((int64_t(n) * p.H + h) * K + 64 * kb) * V;
      wg::frag_for_each<V>(acc, [&](int r, int cc, float& x) { x = src[int64_t(r) * V + cc]; });
      wg::store_transposed<V>(acc, Ht, 64 * kb);
    }
  }
  const int64_t strideY = int64_t(p.H) * K, strideO = int64_t(p.H) * V;
  for (int c = c_begin; c < c_end; ++c) {
    const int tok0 = p.chunk_tok[c], len = p.chunk_len[c];
    __syncthreads();  // the last chunk's product has read Yt
    constexpr int kPieces = K / 8;  // 16-byte pieces of a row
    for (int i = threadIdx.x; i < kChunk * kPieces; i += 128) {
      const int r = i / kPieces, c8 = 8 * (i % kPieces);
      uint4 x = make_uint4(0, 0, 0, 0);
      if (r < len) x = *reinterpret_cast<const uint4*>(p.seg_y + (int64_t(tok0) + r) * strideY + int64_t(h) * K + c8);
      *reinterpret_cast<uint4*>(Yt + wg::tile_offset<kChunk>(r, c8)) = x;
    }
    wg::fence_smem_writes();  // Yt (and Hᵀ before the first chunk) for wgmma's async proxy
    __syncthreads();
    float acc[V / 2];
    wg::gemm_issue<V, K, Major::K, Major::K>(acc, Yt, Ht, false);
    wg::commit();
    bf16_t* const o = p.o + int64_t(tok0) * strideO + int64_t(h) * V;
    uint32_t ob[V / 4];  // O's bf16 pairs at the fragment's places, loaded while the product runs
    {
      const int r0 = wg::frag_row(), q = threadIdx.x & 3;
#pragma unroll
      for (int j = 0; j < V / 8; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int r = r0 + 8 * hh;
          ob[2 * j + hh] = r < len ? *reinterpret_cast<const uint32_t*>(o + int64_t(r) * strideO + 8 * j + 2 * q) : 0u;
        }
    }
    wg::wait<0>();
#pragma unroll
    for (int j = 0; j < V / 8; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const float2 of = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&ob[2 * j + hh]));
        acc[4 * j + 2 * hh] += of.x;
        acc[4 * j + 2 * hh + 1] += of.y;
      }
    wg_store_rows<V>(acc, o, strideO, len, 1.f);
  }
}

// The decay cut (SegmentForm::DecayCut; kernels/delta/segments.h's chunk_decay_bounds and
// decay_cut_starts are the CPU twins): chunk c's log bound on head h's state map, Σ over its tokens
// of g + log max(1, |1 − β ‖k‖²|) (g null: DeltaNet's 0). A block of kPlanThreads forms the bounds
// of a window of up to kPlanWindow chunks at once: 4 lanes a token's row of k (K / 32 16-byte
// loads each), 32 rows a pass, the passes' loads independent; each warp's rows summed by shuffles
// into partial [passes][warps], then each chunk's sum in one fixed order (every thread reads the
// same). (One chunk at a time, a block barrier between, put every chunk's load latency on the
// walk, which at the benchmark's gates is 7 chunks long; a kernel of its own forming every chunk's
// before the plan took 42-48 µs at (1, 16384, 16) and 121 µs at (1, 32768, 32), H100, 2026-12-05,
// docs/measurements/2026-12-05-s50/.)
inline constexpr int kPlanThreads = 128;
inline constexpr int kPlanWindow = 8;  // chunks a window (the benchmark's gates cut after about 7)
inline constexpr int kPlanLanes = 4, kPlanRows = kPlanThreads / kPlanLanes;  // a row's lanes; rows a pass
inline constexpr int kPlanPasses = kPlanWindow * kChunk / kPlanRows;
struct PlanScratch {
  float partial[kPlanPasses][kPlanThreads / 32];
  float sums[kPlanWindow];
};
// The bounds of chunks [c0, c0 + count) of head h (count ≤ kPlanWindow) into sc.sums[0, count).
// The window's chunk table first, then kPlanBatch passes' rows of k, β and g issued together: a
// pass at a time (β and g read after its shuffles) put one memory latency on each pass, 16 a
// window, and made the plan 25 µs a forward at (1, 16384, 16) (ncu, H100, 2026-12-05,
// docs/measurements/2026-12-05-s54/). The sums are the same, in the same order.
inline constexpr int kPlanBatch = 8;  // passes whose loads are in flight together
template <int K>
__device__ __forceinline__ void window_decay_bounds(const DeltaParams& p, int c0, int count, int h, PlanScratch& sc) {
  constexpr int kVecs = K / 8 / kPlanLanes;  // 16-byte loads a lane
  static_assert(kVecs >= 1 && kChunk % kPlanRows == 0, "whole rows a pass, passes within a chunk");
  static_assert(kPlanPasses % kPlanBatch == 0, "whole batches a window");
  constexpr int kPassesPerChunk = kChunk / kPlanRows;
  const int t = threadIdx.x, lane_in_row = t % kPlanLanes, row_in_pass = t / kPlanLanes;
  int first_tok[kPlanWindow], rows[kPlanWindow];  // the window's chunks (the last one repeated past count)
#pragma unroll
  for (int i = 0; i < kPlanWindow; ++i) {
    const int c = c0 + min(i, count - 1);
    first_tok[i] = p.chunk_tok[c];
    rows[i] = p.chunk_len[c];
  }
#pragma unroll
  for (int batch = 0; batch < kPlanPasses; batch += kPlanBatch) {
    uint4 x[kPlanBatch][kVecs];
    float beta[kPlanBatch], g[kPlanBatch];
    bool valid[kPlanBatch];
#pragma unroll
    for (int j = 0; j < kPlanBatch; ++j) {
      const int pass = batch + j, i = pass / kPassesPerChunk, r = (pass % kPassesPerChunk) * kPlanRows + row_in_pass;
      valid[j] = i < count && r < rows[i];
      const int64_t tok = int64_t(first_tok[i]) + (valid[j] ? r : 0);
      const uint4* const row = reinterpret_cast<const uint4*>(p.k + (tok * p.H + h) * K) + lane_in_row * kVecs;
#pragma unroll
      for (int v = 0; v < kVecs; ++v) x[j][v] = __ldg(row + v);
      beta[j] = bf2f(p.beta[tok * p.H + h]);
      g[j] = p.g ? p.g[tok * p.H + h] : 0.f;
    }
#pragma unroll
    for (int j = 0; j < kPlanBatch; ++j) {
      float kk = 0.f;
#pragma unroll
      for (int v = 0; v < kVecs; ++v) {
        const uint32_t w[4] = {x[j][v].x, x[j][v].y, x[j][v].z, x[j][v].w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w[e]));
          kk = fmaf(f.x, f.x, fmaf(f.y, f.y, kk));
        }
      }
#pragma unroll
      for (int o = kPlanLanes / 2; o > 0; o >>= 1) kk += __shfl_xor_sync(0xffffffffu, kk, o);  // the row's lanes
      float term = 0.f;
      if (lane_in_row == 0 && valid[j]) term = g[j] + logf(fmaxf(1.f, fabsf(1.f - beta[j] * kk)));
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) term += __shfl_xor_sync(0xffffffffu, term, o);  // the warp's rows
      if ((t & 31) == 0) sc.partial[batch + j][t >> 5] = term;
    }
  }
  __syncthreads();
  if (t < count) {
    float sum = 0.f;
#pragma unroll
    for (int q = 0; q < kPassesPerChunk; ++q)
#pragma unroll
      for (int w = 0; w < kPlanThreads / 32; ++w) sum += sc.partial[t * kPassesPerChunk + q][w];
    sc.sums[t] = sum;
  }
  __syncthreads();
}

// decay_cut_plan_kernel's forward walk (its blocks at blockIdx.z 1): segment n's stop for head h.
template <int K>
__device__ __forceinline__ void decay_cut_stop(const DeltaParams& p, int n, int h, int end, int reach, PlanScratch& sc) {
  const bool last_segment = p.seg_last[n] != 0;
  int far = end;  // one past the last chunk walked
  if (!last_segment) {
    // The sequence's last segment (its segments are consecutive, and it has one): the first flagged
    // after n, kPlanThreads flags a step (one flag a step put a memory latency on each segment).
    __shared__ int last;
    if (threadIdx.x == 0) last = 0x7fffffff;
    __syncthreads();
    for (int base = n + 1;; base += kPlanThreads) {
      const int i = base + int(threadIdx.x);
      const bool flagged = i < p.num_seqs && p.seg_last[i] != 0;
      if (flagged) atomicMin(&last, i);
      if (__syncthreads_or(flagged)) break;
    }
    far = min(p.seq_chunk[last + 1], end + reach);
  }
  float run = 0.f;
  int stop = -1;
  for (int c0 = end; c0 < far && stop < 0; c0 += kPlanWindow) {  // windows [c0, min(far, c0 + W))
    const int c1 = min(far, c0 + kPlanWindow);
    window_decay_bounds<K>(p, c0, c1 - c0, h, sc);
    for (int c = c0; c < c1; ++c) {
      run += sc.sums[c - c0];
      if (run <= p.decay_log_tolerance) {
        stop = c + 1;
        break;
      }
    }
  }
  if (threadIdx.x == 0) {
    const int plan = stop >= 0 ? stop : last_segment ? kPlanFromDht : kPlanLookForward;
    p.seg_stop[int64_t(n) * p.H + h] = plan;
    if (plan == kPlanLookForward) p.seg_flags[int64_t(p.num_seqs) * p.H + kLookedBack] = 1u;
  }
}

// The decay cut's plan: each segment's start for head h (decay_cut_starts), from the bounds above:
// the latest chunk b before its first (p.seq_chunk[n]), no farther back than the segment is long
// nor than p.cut_reach chunks (where set), whose bounds over [b, first) sum to at most
// p.decay_log_tolerance, as b; else kPlanFromH0 for a sequence's first segment and kPlanLookBack
// for the others (a warm-up longer than the segment would make a longer chain than the wait for
// its predecessor, which runs at most that many chunks from its own start or waits in turn; where
// one looks back, seg_flags' kLookedBack word is set: a fallback runs then). A block a (segment,
// head), windows of chunks nearest first.
// With p.seg_stop (the backward's cut) also each segment's stop (decay_cut_ends), the same walk
// forward in time from its end: the chunk after the earliest e past it whose bounds over [end, e]
// sum to at most the tolerance, as e + 1; else kPlanFromDht for a sequence's last segment and
// kPlanLookForward, which sets the word too, for the others. The two walks are blocks of their own
// (blockIdx.z 0 and 1; launch_cut_plan's grid has z = 2 with p.seg_stop): one after the other they
// made the backward's plan 46 µs at (1, 16384, 16) (H100, 2026-12-05).
template <int K>
__global__ void __launch_bounds__(kPlanThreads) decay_cut_plan_kernel(const DeltaParams p) {
  __shared__ PlanScratch sc;
  const int n = blockIdx.x, h = blockIdx.y;
  const int first = p.seq_chunk[n], end = p.seq_chunk[n + 1];
  int reach = end - first;  // chunks walked at most
  if (p.cut_reach > 0) reach = min(reach, p.cut_reach);
  if (blockIdx.z == 1) return decay_cut_stop<K>(p, n, h, end, reach, sc);
  const int seq0 = p.seq_chunk[p.seg_lead[n]], lo = max(seq0, first - reach);
  float run = 0.f;  // the bounds of the chunks already passed (the same in every thread)
  int cut = -1;
  for (int hi = first; hi > lo && cut < 0; hi -= kPlanWindow) {  // windows [max(lo, hi − W), hi)
    const int c0 = max(lo, hi - kPlanWindow);
    window_decay_bounds<K>(p, c0, hi - c0, h, sc);
    for (int c = hi - 1; c >= c0; --c) {
      run += sc.sums[c - c0];
      if (run <= p.decay_log_tolerance) {
        cut = c;
        break;
      }
    }
  }
  if (threadIdx.x == 0) {
    const int plan = cut >= 0 ? cut : first == seq0 ? kPlanFromH0 : kPlanLookBack;
    p.seg_plan[int64_t(n) * p.H + h] = plan;
    if (plan == kPlanLookBack) p.seg_flags[int64_t(p.num_seqs) * p.H + kLookedBack] = 1u;  // (the fallback's word)
  }
}

// (One CTA of a cluster of V / BV; launched with the cluster dimension.)
template <int VAR, int K, int V, int BV, bool OUTPUT, bool STORE, bool SGATE = false>
__global__ void __launch_bounds__(kThreads, (StateFwdLayout<VAR, K, V, BV, OUTPUT, STORE, true, SGATE>::ctas_per_sm))
    state_fwd_cluster_kernel(const DeltaParams p, const __grid_constant__ tma::StateMaps maps) {
  state_fwd_body<VAR, K, V, BV, OUTPUT, STORE, true, SGATE>(p, &maps);
}

}  // namespace rewy::delta::cuda_impl
