// Backward kernels of the chunkwise delta rule (§3-§8).
//
//   state_bwd   sequential, reverse  per (sequence, head, V-slice), the previous chunk's tiles
//                                    prefetched with cp.async: ∂E = s Pᵀ∂O + K̄ ∂H⁺,
//                                    ∂H = e^γ ∂H⁺ + s Q̂ᵀ∂O − Wᵀ∂E; stores ∂E and the bf16 ∂H⁺ of
//                                    each chunk, and ∂S0.
//   grad_chunk  chunk-parallel       everything else, in one CTA per (chunk, head): ∂Q̂, ∂P, ∂K̄,
//                                    ∂W, the WY backward (ReWY §5 or the baseline B1-B4 of §4,
//                                    chosen by a template flag), the key contractions (plain
//                                    GEMMs for scalar gates, centred 16-row blocks for channel
//                                    gates, §6), the gate gradients by key-product reductions
//                                    (§7.1; the key Gram for the GDN baseline), the in-chunk
//                                    reverse cumsum of ∂G, and every input gradient in its final
//                                    dtype.
#pragma once
#include "kernels/delta/cuda/chunk_fwd.cuh"

namespace rewy::delta::cuda_impl {

// Element (j, e) of a warp's 16 × 8NT tile at (m0, n0) sits at (row, col).
template <int NT, class F>
__device__ __forceinline__ void tile_for(int m0, int n0, F&& f) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) f(j, e, m0 + g + (e >> 1) * 8, n0 + 8 * j + 2 * t + (e & 1));
}

// acc = A · Bᵀ over KK for the warpgroup's m64 × 8NT block, by wgmma: A [64][KK] and B (8NT rows of
// a BROWS-row tile, from its row b0) 128-byte-swizzled K-major. Each warp's part is the fragment
// warp_mma gives its 16 rows, so the epilogues stay.
// wg_fragment_issue: the products committed, not waited for (the caller works beside them, then
// wg::wait<0>()).
template <int NT, int KK, int BROWS>
__device__ __forceinline__ void wg_fragment_issue(float (&acc)[1][NT][4], const bf16_t* A, const bf16_t* B, int b0) {
  wg::gemm_issue<8 * NT, KK, wg::Major::K, wg::Major::K, BROWS>(reinterpret_cast<float(&)[4 * NT]>(acc), A,
                                                              B + b0 * wg::kPanel, false);
  wg::commit();
}
template <int NT, int KK, int BROWS>
__device__ __forceinline__ void wg_fragment(float (&acc)[1][NT][4], const bf16_t* A, const bf16_t* B, int b0) {
  wg_fragment_issue<NT, KK, BROWS>(acc, A, B, b0);
  wg::wait<0>();
}

// frag_store_bf16 into a 128-byte-swizzled tile of R rows (wg::tile_offset): a K-major operand of
// the warpgroup products. (A column pair stays inside its 16-byte piece; the swizzle spreads a
// warp's 8 rows over every bank, as the padded rows did.)
template <int R, int NT>
__device__ __forceinline__ void frag_store_bf16_sw(const float (&acc)[1][NT][4], bf16_t* dst, int m0, int n0) {
  frag_visit_pairs<1, NT>(m0, n0, [&](int i, int j, int h, int r, int c) {
    *reinterpret_cast<__nv_bfloat162*>(dst + wg::tile_offset<R>(r, c)) =
        __floats2bfloat162_rn(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
  });
}

// Phases of a state_bwd step for REWY_KERNEL_TIMING=2 (thread 0's view), summed over the steps
// of every V-slice: the wait for the step's tiles, ∂H⁺ to shared memory (and its snapshot out),
// ∂E (and Q̂ᵀ∂O), then ∂H's update.
inline constexpr const char* kStateBwdPhases[] = {"wait", "dH+", "dE,QdO", "dH"};

// A grid launched beside the one before it (programmatic dependent launch) completes only after
// that one: whatever follows in the stream then finds both done (the replay's grid before
// state_bwd's, state_bwd's before grad_chunk's). Thread 0 holds the block.
__device__ __forceinline__ void finish_after_prerequisite() {
  if (threadIdx.x == 0) pdl_wait_prerequisite();
}

template <int VAR, int K, int V, int BV>
__global__ void __launch_bounds__(kThreads, 1) state_bwd_kernel(const DeltaParams p) {
  constexpr bool kQlo = VT<VAR>::gated;         // Q̂ = Q ⊙ Γ is not bf16-exact: use its two-term form
  constexpr bool kKraw = VT<VAR>::scalar_gate;  // K̄'s decay as a row factor in fp32
  using L = SeqLayout<K, V, BV, kQlo, kKraw>;
  using S = typename L::S;
  using ST = StateTile<K, BV>;
  constexpr int KP = S::KP, BVP = S::BVP, NE = BV / 16;
  extern __shared__ __align__(16) char smem[];
  bf16_t* dHb = reinterpret_cast<bf16_t*>(smem + L::Hb);
  bf16_t* dEn = reinterpret_cast<bf16_t*>(smem + L::Eb);  // −∂E: the Wᵀ∂E term enters ∂H negated
  const SeqBlock<K, V, BV> b;
  const int64_t strideV = int64_t(p.H) * V;

  pdl_launch_dependents();  // grad_chunk may start beside this pass (LaunchInfo::overlap_grad)
  float dH[1][ST::NT][4];
  b.load_state(dH, p.dht, p.H);
  phase_start(p.phase_cycles);
  seq_chunk_loop<S, 2, true>(smem + L::stages, p, b.n, b.h, b.v0, V, [&](int c, char* st) {
    const typename S::Tiles t = S::tiles(st);
    const bf16_t* dOs = t.vs;
    const int tok0 = t.span.tok0, len = t.span.len;
    const int64_t baseV = (int64_t(tok0) * p.H + b.h) * V + b.v0;
    phase_mark(p.phase_cycles, 0);  // the step's tiles have landed (thread 0's copies)
    frag_store_bf16(dH, dHb, BVP, b.sm0, b.sn0);
    if (p.dHs) frag_store_global(dH, p.dHs + (int64_t(c) * p.H + b.h) * K * V + b.v0, V, b.sm0, b.sn0, K);
    __syncthreads();  // stage tiles landed for every thread; ∂H⁺ snapshot complete
    phase_mark(p.phase_cycles, 1);
    {  // ∂E = s Pᵀ ∂O + K̄ ∂H⁺
      float acc[1][NE][4];
      frag_zero(acc);
      warp_mma<1, NE, Lay::ColMajor, Lay::RowMajor>(acc, t.P, kCP, dOs, BVP, b.em0, b.en0, 0, kChunk);
      if constexpr (kKraw) {  // scalar gates: K̄ ∂H⁺ = Diag(e^{γ−G}) (K ∂H⁺)
        float kh[1][NE][4];
        frag_zero(kh);
        warp_mma<1, NE, Lay::RowMajor, Lay::RowMajor>(kh, t.Kb, KP, dHb, BVP, b.em0, b.en0, 0, K);
        const float2 f = scalar_row_decays(t.graw, b.em0);
        tile_for<NE>(b.em0, b.en0, [&](int j, int e, int, int) {
          acc[0][j][e] = p.scale * acc[0][j][e] + (e < 2 ? f.x : f.y) * kh[0][j][e];
        });
      } else {
        frag_for_each(acc, b.em0, b.en0, [&](int, int, float& x) { x *= p.scale; });
        warp_mma<1, NE, Lay::RowMajor, Lay::RowMajor>(acc, t.Kb, KP, dHb, BVP, b.em0, b.en0, 0, K);
      }
      frag_store_global(acc, p.dE + baseV, strideV, b.em0, b.en0, len);
      frag_for_each(acc, b.em0, b.en0, [&](int, int, float& x) { x = -x; });
      frag_store_bf16(acc, dEn, BVP, b.em0, b.en0);
    }
    float tq[1][ST::NT][4];  // Q̂ᵀ ∂O, scaled by s below
    frag_zero(tq);
    warp_mma<1, ST::NT, Lay::ColMajor, Lay::RowMajor>(tq, t.Qh, KP, dOs, BVP, b.sm0, b.sn0, 0, kChunk);
    if constexpr (kQlo)
      warp_mma<1, ST::NT, Lay::ColMajor, Lay::RowMajor>(tq, t.Qlo, KP, dOs, BVP, b.sm0, b.sn0, 0, kChunk);
    __syncthreads();  // −∂E complete
    phase_mark(p.phase_cycles, 2);
    // ∂H = e^γ ⊙ ∂H⁺ + s Q̂ᵀ ∂O − Wᵀ ∂E
    tile_for<ST::NT>(b.sm0, b.sn0, [&](int j, int e, int r, int) {
      dH[0][j][e] = t.gam[r] * dH[0][j][e] + p.scale * tq[0][j][e];
    });
    warp_mma<1, ST::NT, Lay::ColMajor, Lay::RowMajor>(dH, t.W, KP, dEn, BVP, b.sm0, b.sn0, 0, kChunk);
    __syncthreads();  // this stage, ∂H⁺ and −∂E buffers are free for the next chunk
    count_step(p, kStateBwdPass, c, b.h);  // ∂H⁺ (stored at the step's start) and ∂E are out
    phase_mark(p.phase_cycles, 3);
  });
  b.store_state(dH, p.dh0, p.H);
  finish_after_prerequisite();
}

// ------------------------------------------------------------------------------------------------
// state_bwd on warpgroup tensor cores (V-slices of 64 and 128; the mma.sync kernel above serves
// 16 and 32, where ∂O cannot be an MN-major wgmma operand of whole 128-byte rows). The mirror of
// state_fwd: the stage's W, K̄ (K for scalar gates), Q̂ (and its second term), P and ∂O land as
// 128-byte-swizzled tiles; warpgroup w < K / 64 holds ∂H's rows [64 w, +64) in registers and
// writes them transposed (∂H⁺ᵀ [BV][K], stmatrix); the last warpgroup forms
// ∂E = s Pᵀ∂O + K̄ ∂H⁺ and writes −∂Eᵀ [BV][C]; each holder then updates its rows,
// ∂H = e^γ ∂H⁺ + s Q̂ᵀ∂O − Wᵀ∂E (Q̂ᵀ∂O in the accumulator that warpgroup 1's ∂E uses).
//
// Layout: every stage's tiles first (1024-byte aligned), then ∂H⁺ᵀ and −∂Eᵀ, then each stage's
// small part (e^γ, raw g, span): padding each stage to 1 KB would push the channel-gate kernel at
// BV = 128 past 227 KB.
// TBW (state_bwd_wg_kernel's): 𝒯 Diag(β) [C][C] in W's slot (𝒯 with p.row_betas, the rows' β in
// rbeta), and (KRAW) the rows' e^G.
// DKS (Config::dk_state_term): the stage takes E [C][V] too (Ep), for DeltaNet's state term of ∂K̄.
template <int K, int BV, bool QLO, bool KRAW, bool TBW = false, bool DKS = false>
struct WgBwdShape {
  static constexpr int NS = 2;  // stages
  static constexpr size_t tile_k = size_t(kChunk) * K * 2;
  static constexpr size_t W = 0, Kb = W + (TBW ? size_t(kChunk) * kChunk * 2 : tile_k);
  static constexpr size_t Qh = Kb + tile_k, Qlo = Qh + tile_k;  // bf16 [C][K]
  static constexpr size_t P = Qlo + (QLO ? tile_k : 0);                                  // bf16 [C][C]
  static constexpr size_t dO = P + size_t(kChunk) * kChunk * 2;                          // bf16 [C][BV]
  static constexpr size_t Ep = dO + size_t(kChunk) * BV * 2;                             // DKS: bf16 [C][V]
  static constexpr size_t tiles = Ep + (DKS ? size_t(kChunk) * BV * 2 : 0);              // a stage's tiles
  static constexpr size_t gam = 0, graw = gam + K * 4, grows = graw + (KRAW ? kChunk * 4 : 0);  // e^γ, g,
  static constexpr size_t rbeta = grows + (TBW && KRAW ? kChunk * 4 : 0);  // e^{G_i} (TBW, GDN), then
  static constexpr size_t span = rbeta + (TBW ? kChunk * 4 : 0);         // β of the rows (TBW), span
  static constexpr size_t small = span + 16;
  static constexpr size_t Dt = NS * tiles;                             // ∂H⁺ᵀ bf16 [BV][K]
  static constexpr size_t Et = Dt + size_t(BV) * K * 2;                // −∂Eᵀ bf16 [BV][C]
  static constexpr size_t smalls = Et + size_t(BV) * kChunk * 2;       // NS × small
  static constexpr size_t total = 1024 + smalls + NS * small;          // 1 KB to align the dynamic base
  static constexpr bool fits = total + kStaticSmem <= 227 * 1024;
  static_assert(tiles % 1024 == 0 && Dt % 1024 == 0 && Et % 1024 == 0, "swizzled tiles are 1024-byte aligned");
};

// QRAW (GDN, the Recompute backward: the replay writes no Q̂): the stage takes q in Q̂'s place and
// turns it into Q̂ = Q ⊙ e^G and its second bf16 term in shared memory (the rows' e^G from
// p.gate_rows, the replay's), the values wy_prep's chunk_operands8 forms, bit for bit; the replay
// then writes 2 × [C][K] bf16 less a chunk and this pass reads one tile less. Warpgroup 0 copies
// the whole q tile and converts the next stage's while warpgroup 1 forms ∂E, off the step's chain
// (converting each step's own q before its first barrier put it on the chain: state_bwd 176 ->
// 190 us at shape 0, against 176 -> 157 this way; H200, 2026-12-01, docs/measurements/2026-12-01-s19/).
//
// Few wgmma pipeline drains on the step's chain: Q̂ᵀ∂O's two terms in flight together; the ∂E
// warpgroup's two products too (the 1/s between them folded into ∂H⁺ᵀ's bf16 tile; not with
// scalar gates, whose row decays scale one product), and its own Q̂ᵀ∂O issued behind them, so its
// last phase is −Wᵀ∂E alone: state_bwd 1.00-1.04x at shape 0, the backward 1.003-1.022x geomean
// (H200, 2026-12-02, REWY_EXPERIMENTS=wgchain, docs/measurements/2026-12-02-s22/call2-experiments/).
//
// TBW (DeltaNet's and GDN's Recompute backward with the fused replay: replay_no_w in delta_cuda.cu): W is never
// formed. Wᵀ∂E = Kᵀ Diag(Γ) (𝒯 Diag(β))ᵀ ∂E (W = 𝒯 Diag(β) Diag(Γ) K; GDN's Γ = e^G of the rows,
// DeltaNet's 1): the stage takes 𝒯 Diag(β) (the forward's kept one, or the replay's; [C][C]) in W's slot, the ∂E warpgroup
// forms X = Diag(Γ) (𝒯 Diag(β))ᵀ (−∂E) behind its own barrier and writes Xᵀ over ∂H⁺ᵀ (read by
// then: its ∂E product has completed), and each holder adds its rows of Kᵀ X (K̄'s slot holds raw
// k for both). One 64×64×BV product more on the step's chain; wy_replay then forms no W (16 KB a
// chunk less written there and 8 KB less read here).
//
// CUT (the backward's decay cut, Config::backward_cut_segments; whole-V slices, the call's
// sequences its segments): each segment's ∂H from zero after its stop (p.seg_stop, the plan's;
// the transposed maps of the chunks between decay as the forward's) or from its sequence's dht
// (its last segment), back over the warm-up chunks to its own first; ∂H⁺, ∂E and the chunk's count
// (by p.count_weight) for its own chunks alone, ∂h0 by each sequence's first segment. No
// look-forward: the plan's word runs the default pass where a segment would need one.
//
// DKS (Config::dk_state_term; DeltaNet, TBW, whole-V slices, after the replay, whose E it reads): the
// state term of ∂K̄, s E (∂H⁺/s)ᵀ, formed by warpgroup 0 from the stage's E and ∂H⁺ᵀ while
// warpgroup 1 forms ∂E, and stored as bf16 [C][K] (p.dKs) for grad_chunk in place of ∂H⁺
// (p.dHs null): 32 KB a chunk not written, 16 KB written, E's 16 KB read. Warpgroup 0 takes
// phase 2's first two terms of ∂H early, so that its Q̂ᵀ∂O accumulator holds the product; Xᵀ goes
// over −∂Eᵀ (dead once X is formed) instead of ∂H⁺ᵀ, which the product still reads.
template <int VAR, int K, int V, int BV, bool QRAW = false, bool TBW = false, bool CUT = false, bool DKS = false>
__global__ void __launch_bounds__(kThreads, 1) state_bwd_wg_kernel(const DeltaParams p) {
  constexpr bool kQlo = VT<VAR>::gated, kKraw = VT<VAR>::scalar_gate;  // as state_bwd_kernel
  constexpr bool kFoldScale = !kKraw, kBothHold = K / 64 >= 2;
  static_assert(!TBW || replay_without_u(VAR, K, V), "W from 𝒯 Diag(β): DeltaNet's and GDN's replay at K = V = 128");
  static_assert(!DKS || (VAR == kDeltaNet && TBW && BV == V && K == BV && !QRAW && !CUT && kFoldScale && kBothHold),
                "DeltaNet's ∂K̄ state term: TBW at whole-V slices, K = V (the product takes Q̂ᵀ∂O's accumulator)");
  using L = WgBwdShape<K, BV, kQlo, kKraw, TBW, DKS>;
  using wg::Major;
  static_assert(kThreads == 256 && K % 64 == 0 && BV % 64 == 0, "two warpgroups; 64-row state blocks; whole panels of ∂O");
  static_assert(!QRAW || VAR == kGDN, "Q̂ from q and row gates: GDN's scalar gates");
  static_assert(!CUT || (VAR == kGDN && BV == V && QRAW && TBW), "the decay cut: GDN's Recompute backward, whole-V slices");
  // The q tile's converting threads' pieces, in async_tile_sw128's order: rows q_row0 + q_step j,
  // column q_col.
  constexpr int kQThreads = 128;  // warpgroup 0
  constexpr int kQPieces = kChunk * K / 8 / kQThreads, kQStep = kQThreads / (K / 8);
  const int q_row0 = int(threadIdx.x) % kQThreads / (K / 8), q_col = 8 * (threadIdx.x % (K / 8));
  // QRAW: e^G of this thread's rows for the stage it converts next (eg_cur) and the one after.
  float eg_cur[kQPieces], eg_next[kQPieces];
  auto load_row_gates = [&](float (&eg)[kQPieces], int c) {
#pragma unroll
    for (int j = 0; j < kQPieces; ++j) eg[j] = p.gate_rows[(int64_t(c) * p.H + blockIdx.y) * 2 * kChunk + q_row0 + j * kQStep];
  };
  static_assert(L::fits, "state_bwd's shared memory exceeds the H200's 227 KB per block");
  extern __shared__ __align__(16) char raw[];
  char* const smem = align_1024(raw);
  bf16_t* const Dt = reinterpret_cast<bf16_t*>(smem + L::Dt);
  bf16_t* const Et = reinterpret_cast<bf16_t*>(smem + L::Et);
  const WgStateBlock<K, V, BV> blk(p.H);
  const int n = blk.n, h = blk.h, v0 = blk.v0, wgi = blk.wgi, srow0 = blk.srow0;
  const bool holds_state = blk.holds_state, forms_dE = wgi == 1;
  const int64_t strideV = int64_t(p.H) * V, strideK = int64_t(p.H) * K, state_at = blk.state_at;
  const float s = p.scale, inv_s = 1.f / p.scale;
  if (!on_path(p.path_flag, p.path_value)) {  // the decay cut's other path runs (DeltaParams::path_flag)
    finish_after_prerequisite();
    return;
  }

  pdl_launch_dependents();  // grad_chunk may start beside this pass (LaunchInfo::overlap_grad)
  float Hacc[BV / 2];  // rows [srow0, +64) of ∂H (K × BV slice), fp32
  // CUT: the chunks [c_begin, stop), the segment's own up to own_end.
  const int own_end = p.seq_chunk[n + 1];
  const int stop = CUT ? p.seg_stop[int64_t(n) * p.H + h] : own_end;
  if constexpr (CUT)
    blk.load_state_at(Hacc, stop == kPlanFromDht ? p.dht : nullptr, blk.state_of(p.seg_owner[n], p.H));
  else
    blk.load_state(Hacc, p.dht);

  auto tiles = [&](int st) { return smem + st * L::tiles; };
  auto smalls = [&](int st) { return smem + L::smalls + st * L::small; };
  auto prefetch = [&](int st, int c, ChunkSpan sp) {
    const int tok0 = sp.tok0, len = sp.len;
    char* const t = tiles(st);
    char* const sm = smalls(st);
    if (threadIdx.x == 0) *reinterpret_cast<ChunkSpan*>(sm + L::span) = sp;
    const int64_t baseK = (int64_t(tok0) * p.H + h) * K;
    auto bf = [&](size_t off) { return reinterpret_cast<bf16_t*>(t + off); };
    if constexpr (TBW) {  // 𝒯 Diag(β) (p.row_betas: 𝒯, and the rows' β) in W's slot, and GDN's e^{G_i}
      async_tile_sw128<kChunk, kChunk>(bf(L::W), p.Tbeta + (int64_t(tok0) * p.H + h) * kChunk, int64_t(p.H) * kChunk, len);
      if constexpr (kKraw) async_tile<1, kChunk * 4>(sm + L::grows, 0, p.gate_rows + (int64_t(c) * p.H + h) * 2 * kChunk, 0, 1);
      if (p.row_betas) async_tile<1, kChunk * 4>(sm + L::rbeta, 0, row_betas_of(p, c, h), 0, 1);
    } else {
      async_tile_sw128<kChunk, K>(bf(L::W), p.W + baseK, strideK, len);
    }
    async_tile_sw128<kChunk, K>(bf(L::Kb), (kKraw ? p.k : p.Kg) + baseK, strideK, len);
    if constexpr (QRAW) {  // warpgroup 0 alone: the threads that convert it
      if (threadIdx.x < kQThreads) async_tile_sw128<kChunk, K, kQThreads>(bf(L::Qh), p.q + baseK, strideK, len);
    } else {
      async_tile_sw128<kChunk, K>(bf(L::Qh), p.Qg + baseK, strideK, len);
    }
    if constexpr (kQlo && !QRAW) async_tile_sw128<kChunk, K>(bf(L::Qlo), p.Qlo + baseK, strideK, len);
    async_tile_sw128<kChunk, kChunk>(bf(L::P), p.P + (int64_t(tok0) * p.H + h) * kChunk, int64_t(p.H) * kChunk, len);
    async_tile_sw128<kChunk, BV>(bf(L::dO), p.dout + (int64_t(tok0) * p.H + h) * V + v0, strideV, len);
    if constexpr (DKS) async_tile_sw128<kChunk, BV>(bf(L::Ep), p.E + (int64_t(tok0) * p.H + h) * V + v0, strideV, len);
    async_tile<1, K * 4>(sm + L::gam, 0, p.gexp + (int64_t(c) * p.H + h) * K, 0, 1);
    if constexpr (kKraw)
      if (int(threadIdx.x) < kChunk) {
        const int i = threadIdx.x, valid = i < len;
        cp_async4(sm + L::graw + 4 * i, p.g + (int64_t(tok0) + (valid ? i : 0)) * p.H + h, valid);
      }
  };

  // The chunks of sequence n, last to first, the next one's tiles in flight (seq_chunk_loop's
  // order, with the stage index for the split layout).
  const int c_begin = p.seq_chunk[n], count = (stop >= 0 ? stop : own_end) - c_begin;
  auto chunk = [&](int i) { return c_begin + count - 1 - i; };
  auto span = [&](int i) { return i < count ? ChunkSpan{p.chunk_tok[chunk(i)], p.chunk_len[chunk(i)]} : ChunkSpan{0, 0}; };
  // q of stage st (this thread's landed pieces) -> Q̂ and its second term, in place and in Qlo.
  auto convert_q = [&](int st, const float (&eg)[kQPieces]) {
    bf16_t* const qh = reinterpret_cast<bf16_t*>(tiles(st) + L::Qh);
    bf16_t* const qlo = reinterpret_cast<bf16_t*>(tiles(st) + L::Qlo);
#pragma unroll
    for (int j = 0; j < kQPieces; ++j) {
      const int off = wg::tile_offset<kChunk>(q_row0 + j * kQStep, q_col);
      float x[8];
      load8(x, qh + off);
#pragma unroll
      for (int e = 0; e < 8; ++e) x[e] *= eg[j];
      store8(qh + off, x);
      store8<true>(qlo + off, x);
    }
  };
  if (count > 0) prefetch(0, chunk(0), span(0));
  cp_async_commit();
  if constexpr (QRAW)
    if (count > 0 && threadIdx.x < kQThreads) {  // stage 0 here; from then on one stage ahead
      load_row_gates(eg_next, chunk(0));
      cp_async_wait<0>();
      convert_q(0, eg_next);
      if (count > 1) load_row_gates(eg_cur, chunk(1));
    }
  ChunkSpan ahead = span(1);
  __syncthreads();  // step 0's span (thread 0 stored it) before it is read
  phase_start(p.phase_cycles);
  for (int i = 0; i < count; ++i) {
    const int st = i % L::NS;
    if (i + 1 < count) prefetch((i + 1) % L::NS, chunk(i + 1), ahead);
    if constexpr (QRAW)
      if (i + 2 < count && threadIdx.x < kQThreads) load_row_gates(eg_next, chunk(i + 2));
    ahead = span(i + 2);
    cp_async_commit();
    cp_async_wait<1>();
    const int c = chunk(i);
    const char* const t = tiles(st);
    const char* const sm = smalls(st);
    auto bf = [&](size_t off) { return reinterpret_cast<const bf16_t*>(t + off); };
    const float* const gam = reinterpret_cast<const float*>(sm + L::gam);
    const ChunkSpan sp = *reinterpret_cast<const ChunkSpan*>(sm + L::span);
    const int64_t baseV = (int64_t(sp.tok0) * p.H + h) * V + v0;
    phase_mark(p.phase_cycles, 0);

    if (holds_state) {  // ∂H⁺ᵀ for this chunk's products, and its bf16 snapshot
      wg::store_transposed<BV>(Hacc, Dt, srow0, kFoldScale ? inv_s : 1.f);
      if (p.dHs && (!CUT || c < own_end))  // (CUT: not in the warm-up chunks; c is uniform over the block)
        wg_store_rows<BV>(Hacc, p.dHs + (int64_t(c) * p.H + h) * K * V + v0 + int64_t(srow0) * V, V, 64, 1.f);
    }
    wg::fence_smem_writes();  // ∂H⁺ᵀ and this thread's landed copies, for wgmma's async proxy
    __syncthreads();
    phase_mark(p.phase_cycles, 1);
    // acc: each holder's Q̂ᵀ∂O (warpgroup 1's ∂E has its own); ∂H's registers meet a wgmma only in
    // the last product. (Accumulating Q̂ᵀ∂O into them in one warpgroup-dependent branch and Wᵀ∂E in
    // another made ptxas serialize the kernel's wgmma, its warning C7520; so did −Wᵀ∂E issued before
    // a warpgroup-dependent Q̂ᵀ∂O with one wait for both.)
    float acc[BV / 2];
    if (holds_state && !forms_dE) {  // Q̂ᵀ∂O, beside the ∂E warpgroup
      wg::gemm_issue<BV, kChunk, Major::MN, Major::MN>(acc, bf(L::Qh) + srow0 * kChunk, bf(L::dO), false);
      if constexpr (kQlo) wg::gemm_issue<BV, kChunk, Major::MN, Major::MN>(acc, bf(L::Qlo) + srow0 * kChunk, bf(L::dO), true);
      wg::commit();
      wg::wait<0>();
      if constexpr (DKS) {  // phase 2's e^γ ∂H⁺ + s Q̂ᵀ∂O now; then s E (∂H⁺/s)ᵀ [C][K] in acc
        wg::frag_for_each<BV>(Hacc, [&](int r, int, float& x) { x *= gam[srow0 + r]; });
#pragma unroll
        for (int j = 0; j < BV / 2; ++j) Hacc[j] += s * acc[j];
        wg::gemm<K, BV, Major::K, Major::MN>(acc, bf(L::Ep), Dt, false);
        if (!CUT || c < own_end) wg_store_rows<K>(acc, p.dKs + (int64_t(sp.tok0) * p.H + h) * K, strideK, sp.len, s);
      }
    }
    if constexpr (QRAW)  // warpgroup 0 (a holder, not the ∂E warpgroup): the next stage's q, landed
      if (threadIdx.x < kQThreads && i + 1 < count) {
        cp_async_wait<0>();
        convert_q((i + 1) % L::NS, eg_cur);
      }
    if (forms_dE) {  // ∂E's products, then (both warpgroups holding) this one's Q̂ᵀ∂O behind them
      float accE[BV / 2];
      wg::gemm_issue<BV, K, Major::K, Major::K>(accE, bf(L::Kb), Dt, false);
      if constexpr (kFoldScale) wg::gemm_issue<BV, kChunk, Major::MN, Major::MN>(accE, bf(L::P), bf(L::dO), true);
      wg::commit();
      if constexpr (kBothHold) {
        wg::gemm_issue<BV, kChunk, Major::MN, Major::MN>(acc, bf(L::Qh) + srow0 * kChunk, bf(L::dO), false);
        if constexpr (kQlo) wg::gemm_issue<BV, kChunk, Major::MN, Major::MN>(acc, bf(L::Qlo) + srow0 * kChunk, bf(L::dO), true);
        wg::commit();
        wg::wait<1>();  // ∂E's group (the older of the two)
      } else {
        wg::wait<0>();
      }
      if constexpr (!kFoldScale) {  // scalar gates: K̄∂H⁺'s rows scaled before Pᵀ∂O joins them
        const float2 f = scalar_row_decays(reinterpret_cast<const float*>(sm + L::graw), 16 * ((threadIdx.x >> 5) & 3));
#pragma unroll
        for (int j = 0; j < BV / 2; ++j) accE[j] *= ((j & 2) ? f.y : f.x) * inv_s;
        wg::gemm_issue<BV, kChunk, Major::MN, Major::MN>(accE, bf(L::P), bf(L::dO), true);
        wg::commit();
        wg::wait<0>();
      }
#pragma unroll
      for (int j = 0; j < BV / 2; ++j) accE[j] *= s;
      if (!CUT || c < own_end) wg_store_rows<BV>(accE, p.dE + baseV, strideV, sp.len, 1.f);
#pragma unroll
      for (int j = 0; j < BV / 2; ++j) accE[j] = -accE[j];
      wg::store_transposed<BV>(accE, Et, 0);
      wg::fence_smem_writes();
      if constexpr (TBW) {  // Xᵀ over ∂H⁺ᵀ (DKS: over −∂Eᵀ), X = Diag(Γ) (𝒯 Diag(β))ᵀ (−∂E)
        warpgroup_sync(2);  // this warpgroup's −∂Eᵀ; its ∂E products (∂H⁺ᵀ's last readers) are done
        wg::gemm<BV, kChunk, Major::MN, Major::K>(accE, bf(L::W), Et, false);  // (awaits Q̂ᵀ∂O too)
        if (kKraw || p.row_betas) {  // rows by Γ (GDN) and β (p.row_betas: W's slot holds 𝒯)
          const float* const grows = reinterpret_cast<const float*>(sm + L::grows);
          const float* const rb = reinterpret_cast<const float*>(sm + L::rbeta);
          wg::frag_for_each<BV>(accE, [&](int r, int, float& x) { x *= (kKraw ? grows[r] : 1.f) * (p.row_betas ? rb[r] : 1.f); });
        }
        if constexpr (DKS) warpgroup_sync(2);  // every warp's part of X's product has read −∂Eᵀ
        wg::store_transposed<BV>(accE, DKS ? Et : Dt, 0);
        wg::fence_smem_writes();
      }
      wg::wait<0>();  // Q̂ᵀ∂O
    }
    __syncthreads();  // −∂Eᵀ (TBW: Xᵀ) complete
    phase_mark(p.phase_cycles, 2);
    if (holds_state) {  // ∂H = e^γ ∂H⁺ + s Q̂ᵀ∂O − Wᵀ∂E
      if (!DKS || forms_dE) {  // (DKS: warpgroup 0 took these two terms in phase 1)
        wg::frag_for_each<BV>(Hacc, [&](int r, int, float& x) { x *= gam[srow0 + r]; });
#pragma unroll
        for (int j = 0; j < BV / 2; ++j) Hacc[j] += s * acc[j];
      }
      if constexpr (TBW) wg::gemm<BV, kChunk, Major::MN, Major::K>(Hacc, bf(L::Kb) + srow0 * kChunk, DKS ? Et : Dt, true);  // + Kᵀ X
      else wg::gemm<BV, kChunk, Major::MN, Major::K>(Hacc, bf(L::W) + srow0 * kChunk, Et, true);  // − Wᵀ∂E
    }
    __syncthreads();  // this stage, ∂H⁺ᵀ and −∂Eᵀ are free for the next chunk
    if constexpr (CUT) {
      if (c < own_end) count_cut_step(p, kStateBwdPass, c, h);
    } else {
      count_step(p, kStateBwdPass, c, h);  // ∂H⁺ (stored at the step's start) and ∂E are out
    }
    phase_mark(p.phase_cycles, 3);
    // The e^G loaded two steps ahead becomes the next conversion's at the step's end, not beside
    // its global load.
    if constexpr (QRAW) {
#pragma unroll
      for (int j = 0; j < kQPieces; ++j) eg_cur[j] = eg_next[j];
    }
  }
  cp_async_wait<0>();
  if constexpr (CUT) {  // ∂h0 by each sequence's first segment
    if (p.seg_seq[n] >= 0) blk.store_state_at(Hacc, p.dh0, blk.state_of(p.seg_seq[n], p.H));
  } else if (holds_state && p.dh0) {
    wg::frag_for_each<BV>(Hacc, [&](int r, int cc, float& x) { p.dh0[state_at + int64_t(r) * V + cc] = x; });
  }
  finish_after_prerequisite();
}

// ------------------------------------------------------------------------------------------------
// grad_chunk

// rowacc[m0 + g] += Σ over the quad of s0, rowacc[m0 + g + 8] += Σ of s1: a thread's partial sums
// of its two fragment rows (shared-memory atomics; two warps share a row).
__device__ __forceinline__ void row_pair_add(float s0, float s1, int m0, float* rowacc) {
  const int lane = threadIdx.x & 31, g = lane >> 2;
  s0 += __shfl_xor_sync(0xffffffffu, s0, 1);
  s0 += __shfl_xor_sync(0xffffffffu, s0, 2);
  s1 += __shfl_xor_sync(0xffffffffu, s1, 1);
  s1 += __shfl_xor_sync(0xffffffffu, s1, 2);
  if ((lane & 3) == 0) {
    atomicAdd(&rowacc[m0 + g], s0);
    atomicAdd(&rowacc[m0 + g + 8], s1);
  }
}

// rowacc[row] += Σ over the warp's columns of v.
template <int NT>
__device__ __forceinline__ void row_reduce_add(const float (&v)[1][NT][4], int m0, float* rowacc) {
  float s0 = 0.f, s1 = 0.f;
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    s0 += v[0][j][0] + v[0][j][1];
    s1 += v[0][j][2] + v[0][j][3];
  }
  row_pair_add(s0, s1, m0, rowacc);
}

// colacc[col] += Σ over the warp's 16 rows of v.
template <int NT>
__device__ __forceinline__ void col_reduce_add(const float (&v)[1][NT][4], int n0, float* colacc) {
  const int lane = threadIdx.x & 31, t = lane & 3;
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int par = 0; par < 2; ++par) {
      float s = v[0][j][par] + v[0][j][par + 2];
      s += __shfl_xor_sync(0xffffffffu, s, 4);
      s += __shfl_xor_sync(0xffffffffu, s, 8);
      s += __shfl_xor_sync(0xffffffffu, s, 16);
      if (lane < 4) atomicAdd(&colacc[n0 + 8 * j + 2 * t + par], s);
    }
}

// grad_chunk's (chunk, head) and the chunk's span: blockIdx (x: chunk, y: head), or with
// p.grad_items the CTA's place in the grid taking the item list's chunks in order, every head of
// one before the next (the state passes finish a chunk of every pair at about the same time).
struct GradItem {
  int c, h, tok0, len;
};
__device__ __forceinline__ GradItem grad_item(const DeltaParams& p) {
  if (!p.grad_items) {
    const int c = blockIdx.x;
    return {c, int(blockIdx.y), p.chunk_tok[c], p.chunk_len[c]};
  }
  const int64_t place = blockIdx.x + int64_t(gridDim.x) * blockIdx.y;
  const int4 it = p.grad_items[place / p.H];
  return {it.x, int(place % p.H), it.y, it.z};
}

// The overlapped backward: whether every V-slice of both state passes has finished chunk c of
// head h (thread 0; true without counts). Read before the block's first copies: read after the
// first tiles were issued, the load returned only behind them and cost every CTA about 1.5 us
// (H200, 2026-12-01, docs/measurements/2026-12-01-s20/call2-overlap/).
__device__ __forceinline__ bool passes_out(const DeltaParams& p, int c, int h) {
  return !p.pass_done || threadIdx.x != 0 || passes_counted(p, c, h);
}
// Then, before the loads of their outputs: thread 0 waits if they were not out, and the block
// barrier orders every thread's later copies after its acquire. False: the wait gave up
// (wait_passes_counted), for every thread of the block.
__device__ __forceinline__ bool wait_for_passes(const DeltaParams& p, int c, int h, bool out) {
  if (!p.pass_done) return true;
  const bool gave_up = threadIdx.x == 0 && !out && !wait_passes_counted(p, c, h);
  return !__syncthreads_or(gave_up);
}
// The overlapped backward: the last grad_chunk CTA to finish holds the grid until state_bwd's is
// complete (the kernels after it wait for grad_chunk's grid only).
__device__ __forceinline__ void grad_cta_done(const DeltaParams& p) {
  if (p.grad_done && threadIdx.x == 0)
    if (atomicAdd(p.grad_done, 1u) == unsigned(p.num_chunks) * unsigned(p.H) - 1) pdl_wait_prerequisite();
}

// SW (grad_chunk's EXP 3, 9, 25 and 26): H, ∂O, E, ∂E and ∂H⁺ as 128-byte-swizzled tiles (S1-S4 and ∂E's
// own slot 1024-byte aligned from a base the kernel aligns), read by the warpgroup products (phase
// 1's, phase 2's ∂W, phase 5's ∂K̄) and by phase 2's warp products (mma.cuh's loaders take
// ld = −rows for a swizzled tile). kGradSw: whether grad_chunk's EXP swizzles them.
template <int EXP>
inline constexpr bool kGradSw = EXP == 3 || EXP == 9 || EXP == 25 || EXP == 26;
// EXP + 100 (ReWY): the E-form ∂A = −stril(R_U Eᵀ) (grad_chunk_kernel's kEForm); + 1000: phase 4's
// operands once a row (kOnePack); EXP % 100 keeps every other switch. One rule for the kernel and
// the launch's check against the bf16 twin.
template <bool REWY, int EXPF>
inline constexpr bool kGradEForm = REWY && EXPF % 1000 >= 100;
// Whether grad_chunk's EXP forms R_W and ∂A on warpgroups (kWgDA), and R_W = −R_U Hᵀ at all
// (kRW3; the bf16 twin must round where it does: launch_impl.cuh checks the defaults against
// kernels/delta/rw_from_ru.h). grad_chunk_kernel says why, beside its kWgDA and kRW3.
template <bool REWY, int EXP>
inline constexpr bool kGradWgDA = REWY && (EXP == 25 || EXP == 26);
template <bool REWY, int EXP>
inline constexpr bool kGradRW3 = kGradWgDA<REWY, EXP> || (REWY && EXP == 27);
template <int VAR, int K, int V, bool SW = false>
struct GradLayout {
  static constexpr size_t align_sw(size_t x) { return SW ? (x + 1023) / 1024 * 1024 : x; }
  static constexpr int KP = K + 8, VP = V + 8;
  static constexpr bool kVec = VT<VAR>::vec_gate;
  static constexpr size_t tile_k = align16(size_t(kChunk) * KP * 2);
  static constexpr size_t tile_v = align16(size_t(kChunk) * VP * 2);
  static constexpr size_t tile_c = align16(size_t(kChunk) * kCP * 2);
  static constexpr size_t state = align16(size_t(K) * VP * 2);
  static constexpr size_t cc_f32 = align16(size_t(kChunk) * (kChunk + 1) * 4);
  // persistent
  static constexpr size_t qs = 0, ks = qs + tile_k;
  static constexpr size_t Gs = ks + tile_k;
  static constexpr size_t Tb = Gs + align16((kVec ? kChunk * kGateLd<K> : kChunk) * 4);
  static constexpr size_t dPb = Tb + tile_c;  // ∂P (scalar gates: Γˢ ⊙ ∂P), masked i >= j
  static constexpr size_t dAb = dPb + tile_c;  // ∂A (scalar gates: Γˢ ⊙ ∂A), masked i > j
  static constexpr size_t betas = dAb + tile_c;
  static constexpr size_t rowacc = betas + align16(kChunk * 4);
  static constexpr size_t rowg = rowacc + align16(kChunk * 4);
  static constexpr size_t rowkb = rowg + align16(kChunk * 4);   // scalar gates: Σ_d K̄ ⊙ ∂K̄ per row
  static constexpr size_t dPdiag = rowkb + align16(kChunk * 4);  // s ∂P_ii (decay factor 1)
  static constexpr size_t colacc = dPdiag + align16(kChunk * 4);
  // slots reused across phases (see grad_chunk_kernel)
  static constexpr size_t S1 = align_sw(colacc + align16(K * 4));
  static constexpr size_t S1_bytes =
      cmax(cmax(state, tile_k + tile_v), cmax(kVec ? align16(size_t(kPackedRows) * KP * 2) : 0, align16(size_t(kChunk) * kGateLd<K> * 4)));
  static constexpr size_t S2 = align_sw(S1 + S1_bytes);
  static constexpr size_t S2_bytes = cmax(cmax(state, cc_f32 + tile_c), cmax(tile_k, align16(size_t(kChunk) * kGateLd<K> * 4)));
  static constexpr size_t S3 = align_sw(S2 + S2_bytes);
  static constexpr size_t S3_bytes = cmax(tile_v, cc_f32);
  static constexpr size_t S4 = align_sw(S3 + S3_bytes);
  static constexpr size_t S5 = S4 + cmax(tile_v, tile_k);  // S4 or S5 (kEarlyDE) also holds GDN2's b in phases 3-4
  // Scalar or no gates have room for ∂E's own slot: it loads during phase 1, not at phase 2's start.
  static constexpr bool kOwnDE = !kVec;
  static constexpr size_t dE = align_sw(S5 + tile_k);
  static constexpr size_t total = dE + (kOwnDE ? tile_v : 0) + (SW ? 1024 : 0);  // SW: 1 KB to align the base
  // ReWY: W and U fit S2 (free in phase 2) and load behind phase 2; R_W then takes S1.
  static constexpr bool kEarlyWU = S2_bytes >= tile_k + tile_v;
  // Phase 4, channel gates: the second packed operand spans S2 and S3 (S4 or S5 holds GDN2's b).
  static_assert(!kVec || S4 - S2 >= align16(size_t(kPackedRows) * KP * 2), "grad_chunk's second packed operand overflows S2-S3");
  static_assert(total + kStaticSmem <= 227 * 1024, "grad_chunk's shared memory (and the phase clock's) exceeds 227 KB per block");
};

// Phases of grad_chunk for REWY_KERNEL_TIMING=2.
inline constexpr const char* kGradPhases[] = {"loads+G", "p1 dQ,dP", "p2 dW,RU", "p3 RW,dA", "p4 contract",
                                               "p5 dKbar,out", "dg scan", "p4 packs"};

// EXP (the defaults: launch_impl.cuh's kGradWg, kGradExp): 3, products on warpgroups (phase 1's
// s ∂O Hᵀ and s ∂O Eᵀ, phase 2's ∂W, phase 5's ∂K̄), DeltaNet's baseline; 9, GDN's baseline: 3 with the
// factored accumulators (kFac) in its ReWY kernel; 25 and 26, DeltaNet's and GDN's ReWY kernels: 3 and
// 9 with R_W = −R_U Hᵀ and ∂A on warpgroups (kRW3); 5, KDA's: the factored accumulators; 7, GDN2's: 5 with KDA's paired
// phase-4 row products; 17, GDN2's ReWY kernel at K = V = 128: 7 with ∂v and ∂w staged for
// 16-byte stores (kStageDV; 15 the same for KDA's); 27, KDA's there: 15 with R_W = −R_U Hᵀ (kRW3).
// (Phase 1's alone, EXP 2, phase 5's alone, EXP 4, and, with the factored accumulators, 6 (the
// fragment prefetch everywhere), 8 (3's warpgroups for KDA and GDN2), 10 (GDN: DeltaNet's paired
// phase-4 row products), 11 (KDA: phase 1's ∂P skipping the masked blocks), 13 (KDA: phase 2's
// fragment prefetch), 14 (GDN: phase 5's conversion beside ∂K̄'s warpgroup product), 19 / 21
// (KDA / GDN2: phase 4's contractions balanced across the row-block warps) and 23 / 24 (DeltaNet / GDN:
// ∂A alone on warpgroups), measured on 2026-12-02 and removed: launch_impl.cuh, launch_grad.)
template <int VAR, int K, int V, bool REWY, int NT, int EXPF = 0>
__global__ void __launch_bounds__(NT, 1) grad_chunk_kernel(const DeltaParams p) {
  // EXPF = EXP + 100 (ReWY): ∂A = −stril(R_U Eᵀ), the E-system's form (kEForm, said below); + 1000
  // (channel gates): phase 4's operands built once a row, the blocks' frames chained on the
  // accumulators (kOnePack, said at phase 4).
  constexpr int EXP = EXPF % 100;
  constexpr bool kEForm = kGradEForm<REWY, EXPF>;
  constexpr bool kOnePack = (EXPF / 1000) & 1;
  // EXPF + 2000 (KDA's ReWY default at K = V = 128, 3127): ∂Q̂ = s ∂O Hᵀ taken in one k-loop over
  // H's fragments with R_W = −R_U Hᵀ in phase 2 (kStackH, said there).
  constexpr bool kStackH = (EXPF / 1000) & 2;
  // EXPF + 4000 (Config::dk_state_term, DeltaNet's ReWY kernel): ∂K̄'s state term E ∂H⁺ᵀ comes from
  // state_bwd (p.dKs, bf16 [C][K], in ∂H⁺'s slot S2 with q's pitch): no ∂H⁺ and no second E.
  constexpr bool kDKS = (EXPF / 1000) & 4;
  static_assert(!kDKS || (VAR == kDeltaNet && REWY), "the ∂K̄ state term from state_bwd: DeltaNet's ReWY kernel");
  // kSW: the products on warpgroups (EXP 3, 9, 25, 26), their operands swizzled (GradLayout's SW).
  constexpr bool kSW = kGradSw<EXP>;
  using L = GradLayout<VAR, K, V, kGradSw<EXP>>;
  using VTr = VT<VAR>;
  // Tile copies keep the per-row source address here (async_tile's STEP false): advanced by one
  // add a row, as every other kernel's are, each default grad_chunk measured 0.4-1.4% slower (KDA's
  // 778 -> 789 us at shape 0) and GDN's and GDN2's baseline kernels spilled 76 bytes (20 before)
  // and 40 (none before) at K = V = 128, 16 warps (H200, 2026-12-03,
  // docs/measurements/2026-12-03-s36/call4/).
  constexpr bool kStepRows = false;
  // warp_mma's fragment prefetch where registers allow (measured there: see warp_mma).
  constexpr bool kPrefetch = !VTr::vec_gate;
  // Products with 𝒯 (triangular) or into strictly lower ∂A skip the zero or masked blocks: KDA's
  // kernel 1.025-1.03x, DeltaNet's 1.014-1.025x; GDN2's (it spills) lost 0.8-1.4% with every
  // product at once, so only phases 2 and 3 there (below) (H200, 2026-12-01).
  constexpr bool kTri = VAR != kGDN2;
  // Phase 1's ∂P = ∂O Eᵀ too, and phase 4's scalar-gate products with the strictly lower ∂A, ∂P:
  // DeltaNet's kernel 1.011x, GDN's 1.037x; phase 1's in KDA's lost 2.7% (H200, 2026-12-01,
  // docs/measurements/2026-12-01-s14/).
  // GDN2's phase 1 skip: ReWY 1.001x, baseline 1.014x alone but 0.996x beside phase 2's
  // unprefetched baseline below (H200, 2026-12-01, docs/measurements/2026-12-01-s17/).
  // With the factored accumulators KDA's skip still lost (0.999x; EXP 11, H200, 2026-12-02,
  // docs/measurements/2026-12-02-s27/call2-decide/).
  constexpr bool kTriP1 = kTri && !VTr::vec_gate;
  // GDN2's ReWY kernel skips them in phases 2 and 3 (with phase 4's single column contraction
  // below: 959.6 -> 927.9 us, 1.034x; phase 2 or 3 alone 1.006-1.007x); its baseline kernel in
  // phase 2 (1028.4 -> 1016.5 us, 1.012x), not 3 (a 92-byte spill, 3% slower) (H200, 2026-12-01,
  // docs/measurements/2026-12-01-s16/). So phase 2's product with 𝒯ᵀ skips for every variant.
  constexpr bool kTriP3 = kTri || REWY;
  // Phases 1-2 hold fewer live accumulators, so the channel gates take the prefetch there too:
  // phase 1 for every variant (kPrefetchP1), phase 2 for all but KDA. GDN2 with both phases: 1.4-2.8%
  // on the kernel, whose spill they cut from 72 to 16 bytes. KDA with phases 1-2 lost 1.3-1.5% on
  // its baseline (a 24-byte spill where it had none); with phase 1 only (16 warps, K = V = 128:
  // ptxas spills 4 and 12 bytes where phases 1-2 on the ReWY kernel alone left 12 and 20) baseline
  // 1.014-1.017x, ReWY 1.000-1.004x (H200, 2026-11-30, shapes 0 and 4,
  // docs/measurements/2026-11-30-s11/ab_compare_next-ab_80f5e50.txt).
  constexpr bool kPrefetchP1 = true;
  // (KDA's phase 2 too, and either's phase 3 or 5, with phase 4's single column contraction:
  // each within -1%..+0.5% on the kernel or slower, H200, 2026-12-01.) Since phase 2's 𝒯 skip
  // and phase 4's single accumulator, GDN2's baseline kernel is faster without phase 2's
  // prefetch (1015.3 -> 989.6 us, 1.026x; spill 20 -> 4 bytes), its ReWY kernel not (930.7 ->
  // 948.2 us) (H200, 2026-12-01, docs/measurements/2026-12-01-s17/).
  // (KDA's phase 2 with the factored accumulators' room: ReWY 1.000x, baseline 0.987x; EXP 13,
  // H200, 2026-12-02, docs/measurements/2026-12-02-s27/call2-decide/.)
  constexpr bool kPrefetchP2 = kPrefetch || (VAR == kGDN2 && REWY);
  // EXP 5 and up (channel gates; GDN's ReWY kernel from 9): factored accumulators.
  // Every term of ∂G is q ⊙ (a term of ∂q), k ⊙ co ⊙ (a term that ∂k takes as co ⊙ x, co the erase
  // coefficient, and ∂b as k ⊙ x) or −k ⊙ (a column term of ∂k), so phases 1-4 accumulate those
  // three sums alone (dq: ∂q's row terms, db: X, the co-scaled terms, dk: the column terms) and
  // phase 5 forms ∂G = q ⊙ dq + k ⊙ (co ⊙ X − dk), ∂k = co ⊙ X + dk, ∂b = k ⊙ X once: the epilogues
  // of phases 1, 3 and 4 read no q, k or co and reduce no ∂β rows, and GDN2 holds three
  // accumulators across phases 1-4, not four. GDN's ReWY kernel factors the same way (EXP 9: EXP
  // 3's warpgroups and this); its baseline sends ∂A's terms to ∂g through the key Gram instead, so
  // not there. KDA's backward 1.022x, GDN2's 1.036x (with EXP 7's pairing, which spilled before:
  // 1.031x against 5's 1.020x), GDN's 1.056x (Recompute, six shapes; H200, 2026-12-02,
  // `SETS='factor facwg2@kda,gdn2 facpf@kda,gdn2 facpair@gdn2' NOSAN='facpf facpair' LIMIT_S=575
  // bash scripts/device-decide.sh`, docs/measurements/2026-12-02-s27/call1-decide/).
  constexpr bool kFac = EXP >= 5 && (VTr::vec_gate || (VAR == kGDN && REWY));
  // GDN2's default (EXP 17): ∂E loads in phase 1's last group into S5 (free there), not at phase
  // 2's start, where the kernel waited for it with nothing else to do; ∂W then takes S4 (∂O's, dead
  // after phase 1) and b S5, issued once every R_U product has read ∂E (phase 2's staging barrier)
  // instead of at phase 3's start: kernel 853.6 -> 842.0 us at shape 0, backward 1.006x (worst
  // 0.998x) (H200, 2026-12-03, experiment deearly, docs/measurements/2026-12-03-s31/call1-decide/).
  // The same for KDA's (∂v staged in S4, R_W in S5) lost 0.995x, with q's tile issued after the
  // first barrier's 0.991x; q late alone lost (KDA 0.987x, GDN 1.003x, GDN2 0.999x), and so did
  // phase 5's E (0.997x KDA, 1.005x GDN2) or ∂H⁺ (KDA 0.995x) loaded at phase 4's start, and
  // DeltaNet's prologue without ∂H⁺ (1.004x) (same call).
  constexpr bool kEarlyDE = REWY && VAR == kGDN2 && EXP == 17;
  // kStackH (KDA): ∂O stays in S4 to phase 2, so ∂E loads into S5 with the prologue's last group, and ∂v
  // is staged there once every R_U product has read ∂E.
  // NT threads: 4 row blocks of 16 × NT / 128 column groups of warps. 16 warps halve every warp's
  // tiles and the accumulators that live across phases, and give each scheduler four warps where
  // 8 warps left it two (the kernel is latency-bound: ncu, 2026-11-30).
  static_assert(NT == 256 || NT == 512, "8 or 16 warps");
  constexpr int KP = L::KP, VP = L::VP, NTK = kWarpTiles<K, NT>, NTV = kWarpTiles<V, NT>, NTC = kWarpTiles<kChunk, NT>;
  constexpr int LDF = kChunk + 1, GL = kGateLd<K>;  // GL: row stride of the fp32 [C][K] tiles
  extern __shared__ __align__(16) char smem_raw[];
  char* const smem = kSW ? align_1024(smem_raw) : smem_raw;
  // H's leading dimension for phase 2's warp_mma (−rows: a swizzled tile).
  constexpr int kLdH = kSW ? -K : VP;
  bf16_t* qs = reinterpret_cast<bf16_t*>(smem + L::qs);
  bf16_t* ks = reinterpret_cast<bf16_t*>(smem + L::ks);
  float* Gs = reinterpret_cast<float*>(smem + L::Gs);
  bf16_t* Tb = reinterpret_cast<bf16_t*>(smem + L::Tb);
  bf16_t* dPb = reinterpret_cast<bf16_t*>(smem + L::dPb);
  bf16_t* dAb = reinterpret_cast<bf16_t*>(smem + L::dAb);
  float* betas = reinterpret_cast<float*>(smem + L::betas);
  float* rowacc = reinterpret_cast<float*>(smem + L::rowacc);
  float* rowg = reinterpret_cast<float*>(smem + L::rowg);
  float* rowkb = reinterpret_cast<float*>(smem + L::rowkb);
  float* dPdiag = reinterpret_cast<float*>(smem + L::dPdiag);
  float* colacc = reinterpret_cast<float*>(smem + L::colacc);
  char* S1 = smem + L::S1;
  char* S2 = smem + L::S2;
  char* S3 = smem + L::S3;
  char* S4 = smem + L::S4;
  char* S5 = smem + L::S5;
  // phase 1: Hb (S1), dHb (S2), Es (S3), dOs (S4); phase 2: dEs (S4, or its own slot and then the staged dv
  // in S4, stored in phase 3; kEarlyDE: S5 from phase 1 on), dWb (S5; kEarlyDE: S4), RUb or YU (S3),
  // dTf (S2, baseline); phase 3: Ws or YW (S1), Us (S1 + tile_k), RWb (S2, ReWY; where W and U fit S2
  // they load there during phase 2 and RWb takes S1: kEarlyWU), dTb/Zb (S2,
  // baseline, after dTf is folded); phase 4: packed operands (S1, the second in S2-S3), Mβ-operand (S1), dAf (S3);
  // phase 5: ∂G (S1), E (S3) and ∂H⁺ (S2) again for ∂K̄ (scalar gates: issued at phase 4), then K̄ ⊙ ∂K̄ (S2),
  // the staged dq, dk (in q's and k's slots) and db (S5).
  bf16_t* Hb = reinterpret_cast<bf16_t*>(S1);
  bf16_t* dHb = reinterpret_cast<bf16_t*>(S2);
  bf16_t* Es = reinterpret_cast<bf16_t*>(S3);
  bf16_t* dOs = reinterpret_cast<bf16_t*>(S4);
  bf16_t* dEs = reinterpret_cast<bf16_t*>(L::kOwnDE ? smem + L::dE : (kEarlyDE || kStackH) ? S5 : S4);
  bf16_t* dWb = reinterpret_cast<bf16_t*>(kEarlyDE ? S4 : S5);
  bf16_t* RUb = reinterpret_cast<bf16_t*>(kEForm ? S2 : S3);  // kEForm: S2 (E stays in S3)
  bf16_t* YU = reinterpret_cast<bf16_t*>(S3);
  float* dTf = reinterpret_cast<float*>(S2);
  constexpr bool kEarlyWU = REWY && L::kEarlyWU;
  bf16_t* Ws = reinterpret_cast<bf16_t*>(kEarlyWU ? S2 : S1);
  bf16_t* Us = reinterpret_cast<bf16_t*>((kEarlyWU ? S2 : S1) + L::tile_k);
  bf16_t* dTb = reinterpret_cast<bf16_t*>(S2 + L::cc_f32);  // beside dTf while it is read
  bf16_t* Zb = reinterpret_cast<bf16_t*>(S2);              // after dTf is dead
  bf16_t* packed = reinterpret_cast<bf16_t*>(S1);
  bf16_t* bK = reinterpret_cast<bf16_t*>(S1);
  float* dAf = reinterpret_cast<float*>(S3);
  float* Gd = reinterpret_cast<float*>(S1);
  bf16_t* bsm = reinterpret_cast<bf16_t*>(kEarlyDE ? S5 : S4);  // GDN2's b, phases 3-5
  bf16_t* wsm = reinterpret_cast<bf16_t*>(S1);  // GDN2's w, baseline phase 2
  float* KbdKb = reinterpret_cast<float*>(S2);
  bf16_t* dvs = reinterpret_cast<bf16_t*>(S4);  // staged dv, phases 2-3, where ∂E has its own slot
  bf16_t* dbs = reinterpret_cast<bf16_t*>(S5);  // GDN2's staged db, phase 5 (S5 held ∂W up to phase 3)
  // EXP 17 (GDN2) and 27 (KDA), the defaults at K = V = 128 (15: KDA's before 27): ∂v (and GDN2's
  // ∂w) leave phase 2 through S1 (H, read by ∂W, is dead; R_W takes S1 in phase 3; EXP 27: S5) in
  // 16-byte rows, where the channel gates store them from the fragments, 4 bytes a thread (∂E has no
  // slot of its own there).
  constexpr bool kStageDV = EXP == 15 || EXP == 17 || EXP == 27;
  // EXP 25 (DeltaNet: 3) and 26 (GDN: 9), the ReWY defaults: R_W = 𝒯ᵀ∂W = −R_U Hᵀ on warpgroups at
  // phase 2's end (∂W = −∂E Hᵀ is never formed and phase 3's 𝒯ᵀ product goes; R_W is rounded from
  // the bf16 R_U, as the bf16 twin does: wy_backward's rw_state), R_W in ∂W's slot S5; then ∂A =
  // R_W Wᵀ + R_U Uᵀ on warpgroups, as phase 1's ∂P (every column block; the mask keeps i > j), with
  // R_W, R_U, W and U as 128-byte-swizzled tiles. (∂A's product alone, EXP 23 / 24: 1.005x / 1.000x.)
  constexpr bool kWgDA = kGradWgDA<REWY, EXP>;
  // EXP 27 (KDA at K = V = 128: 15 with this), the default: R_W = −R_U Hᵀ too, by warp products (R_W
  // in ∂E's slot S4, dead after R_U; ∂v staged in S5, which ∂W no longer takes, so H in S1 lives
  // until R_W; the bf16 twin rounds as for DeltaNet and GDN).
  // (GDN2's, with R_W kept in registers to phase 3 since its b takes S4: 0.986x, H200, 2026-12-03.)
  constexpr bool kRW3 = kGradRW3<REWY, EXP>;
  static_assert(!kWgDA || kSW, "R_W and ∂A on warpgroups: the swizzled layout");
  static_assert(!kRW3 || kWgDA == kSW, "R_W = −R_U Hᵀ on warpgroups exactly where R_U is swizzled");
  static_assert(!kStageDV || (REWY && kEarlyWU && !kSW && L::S1_bytes >= 2 * L::tile_v),
                "∂v staging: ReWY with W and U in S2, so that S1 is free between ∂W and R_W");
  constexpr bool kStageS5 = kStageDV && kRW3;  // ∂v staged in S5 (H in S1 is still read)
  // kEForm (EXPF = EXP + 100; the ReWY defaults at K = V = 128: 125, 126, 3127, 1117): W and U
  // enter the backward only through E = U − WH, so R_W Wᵀ + R_U Uᵀ = R_U (U − WH)ᵀ (R_W = 𝒯ᵀ∂W =
  // −R_U Hᵀ): ∂A = −stril(R_U Eᵀ), one C×V×C product in place of two, W and U never loaded, R_W
  // never stored. R_U takes S2 (W's and U's slot), so E stays in S3 from phase 1 to phase 3. KDA's
  // kernel 779.0 -> 757.9 us at shape 0, Recompute backward 1.015x; GDN2's 854.5 -> 828.6 us,
  // 1.008x. DeltaNet's and GDN's with ∂A on warpgroups and E kept to phase 5 spilled 20 / 60 bytes
  // and lost, 0.984x / 0.985x (H200, 2026-12-03, docs/measurements/2026-12-03-s37/call1/); with ∂A
  // by warp products and E reloaded at phase 4 as before (no spill) they won, 1.017x / 1.019x
  // (call 2).
  static_assert(!kEForm || (kEarlyWU && L::S2_bytes >= L::tile_v), "the E-form keeps R_U in S2 from phase 2 on");
  // R_W's tile: S5 (∂W's) on warpgroups, S4 (∂E's) by warp products, else S1 (H is then dead).
  bf16_t* RWb = reinterpret_cast<bf16_t*>(kWgDA ? S5 : kRW3 ? S4 : kEarlyWU ? S1 : S2);
  bf16_t* dvst = reinterpret_cast<bf16_t*>(kStageS5 ? S5 : S1);
  // kStackH: phase 2's [s ∂O; −R_U] Hᵀ. KDA's kernel 685.7 -> 658.5 us at shape 0, Recompute
  // backward 1.031x (worst 1.028x); GDN2's with ∂Q̂ beside phase 1's ∂W = −∂E Hᵀ gave 1.001x, and
  // KDA's with phase 1's ∂P = s ∂O Eᵀ also beside phase 3's ∂A = −R_U Eᵀ 1.026x (H200, 2026-12-03,
  // `VARIANTS=kda,gdn2 SETS='stackh@kda,gdn2 stackhp@kda' LIMIT_S=570 bash scripts/device-decide.sh`):
  // removed.
  static_assert(!kStackH || (VAR == kKDA && kEForm && kRW3 && kStageS5 && kFac && !kSW && !L::kOwnDE),
                "kStackH: KDA's E-form kernel with ∂v staged in S5");
  bf16_t* dwst = reinterpret_cast<bf16_t*>(S1 + L::tile_v);

  // The overlapped backward: CTAs take chunks in the order the state passes finish them.
  const GradItem item = grad_item(p);
  const int c = item.c, h = item.h, tok0 = item.tok0, len = item.len;
  const bool out = passes_out(p, c, h);
  const int warp = threadIdx.x >> 5;
  const int64_t strideK = int64_t(p.H) * K, strideV = int64_t(p.H) * V;
  const int64_t baseK = (int64_t(tok0) * p.H + h) * K, baseV = (int64_t(tok0) * p.H + h) * V;
  const int m0 = warp_m0(), nK = warp_n0<K, NT>(), nV = warp_n0<V, NT>();
  phase_start(p.phase_cycles);  // phases as kGradPhases names them
  const int cm0 = m0, cn0 = warp_n0<kChunk, NT>();  // C×C tiles
  const int64_t baseS = (int64_t(c) * p.H + h) * K * V;  // this chunk's state in Hs, dHs
  // E and ∂H⁺ are loaded twice: for phase 1, and again for ∂K̄ (phase 5; scalar gates at phase 4).
  auto load_E = [&] {
    if constexpr (kSW) async_tile_sw128<kChunk, V, NT, kStepRows>(Es, p.E + baseV, strideV, len);
    else load_tile<kChunk, V, NT, kStepRows>(Es, VP, p.E + baseV, strideV, len);
  };
  auto load_dH = [&] {
    if constexpr (kDKS) load_tile<kChunk, K, NT, kStepRows>(dHb, KP, p.dKs + baseK, strideK, len);
    else if constexpr (kSW) async_tile_sw128<K, V, NT, kStepRows>(dHb, p.dHs + baseS, V, K);
    else load_tile<K, V, NT, kStepRows>(dHb, VP, p.dHs + baseS, V, K);
  };
  auto load_dE = [&] {
    if constexpr (kSW) async_tile_sw128<kChunk, V, NT, kStepRows>(dEs, p.dE + baseV, strideV, len);
    else load_tile<kChunk, V, NT, kStepRows>(dEs, VP, p.dE + baseV, strideV, len);
  };
  constexpr int kLdDE = kSW ? -kChunk : VP;  // ∂E's leading dimension for warp_mma (−rows: swizzled)

  // The tiles land in three cp.async groups in the order phase 1 reads them: q, ∂O, H (∂Q̂); E (∂P);
  // k, 𝒯, ∂H⁺. The first group lands hardly earlier than all of them (the prologue is bound by what
  // one SM pulls, about 23 bytes a cycle), so this gained GDN2 3% and held the others within 1.5%
  // (H200, 2026-11-30).
  const float bt = issue_beta<VAR>(p, tok0, len, h);
  gate_issue<VAR, K, NT, K, kStepRows>(Gs, p, tok0, len, h);
  load_tile<kChunk, K, NT, kStepRows>(qs, KP, p.q + baseK, strideK, len);
  if constexpr (kSW) async_tile_sw128<kChunk, V, NT, kStepRows>(dOs, p.dout + baseV, strideV, len);
  else load_tile<kChunk, V, NT, kStepRows>(dOs, VP, p.dout + baseV, strideV, len);
  if (!wait_for_passes(p, c, h, out)) {  // H, E, ∂H⁺ and ∂E of this chunk are out, or never will be
    cp_async_commit();  // the copies issued so far land before the block leaves
    cp_async_wait<0>();
    grad_cta_done(p);
    return;
  }
  if constexpr (kSW) {
    async_tile_sw128<K, V, NT, kStepRows>(Hb, p.Hs + baseS, V, K);
    cp_async_commit();
    async_tile_sw128<kChunk, V, NT, kStepRows>(Es, p.E + baseV, strideV, len);
  } else {
    load_tile<K, V, NT, kStepRows>(Hb, VP, p.Hs + baseS, V, K);
    cp_async_commit();
    load_E();
  }
  cp_async_commit();
  load_tile<kChunk, K, NT, kStepRows>(ks, KP, p.k + baseK, strideK, len);
  load_tile<kChunk, kChunk, NT, kStepRows>(Tb, kCP, p.Tinv + (int64_t(tok0) * p.H + h) * kChunk, int64_t(p.H) * kChunk, len);
  if constexpr (!kDKS) load_dH();  // (DeltaNet reads ∂H⁺ in phase 5 alone; gated variants in phase 1 too)
  if constexpr (kEarlyDE || kStackH) load_dE();
  cp_async_commit();
  if (threadIdx.x < kChunk) {
    betas[threadIdx.x] = bt;
    rowacc[threadIdx.x] = 0.f;
    rowg[threadIdx.x] = 0.f;
    rowkb[threadIdx.x] = 0.f;
  }
  for (int d = threadIdx.x; d < K; d += NT) colacc[d] = 0.f;
  gate_scan<VAR, K, NT, 3>(Gs, p);
  cp_async_wait<2>();
  if constexpr (kSW) wg::fence_smem_writes();  // this thread's landed copies, for wgmma's async proxy
  __syncthreads();  // q, ∂O and H have landed; G is complete
  phase_mark(p.phase_cycles, 0);
  // ∂E (where it has its own slot) lands by phase 2, issued behind the prologue's tiles.
  if constexpr (L::kOwnDE) load_dE();

  // Element d of a row. In a fragment epilogue (tile_for: e the accumulator index) a thread's
  // columns come in pairs (d − (e & 1), d − (e & 1) + 1), so the read takes the pair: once
  // unrolled, both elements' reads are the same 8-byte (fp32) or 4-byte (bf16) load (e < 0: one
  // element).
  auto pick = [](float2 v, int e) { return (e & 1) ? v.y : v.x; };
  auto at_f32 = [&](const float* row, int d, int e) -> float {
    return e < 0 ? row[d] : pick(*reinterpret_cast<const float2*>(row + d - (e & 1)), e);
  };
  auto at_bf16 = [&](const bf16_t* row, int d, int e) -> float {
    return e < 0 ? bf2f(row[d]) : pick(bf2f2(row + d - (e & 1)), e);
  };
  // Gate helpers: G at (i, d), Γ = e^G, γ = G of the last row (rows past len continue flat).
  auto Gat = [&](int i, int d, int e = -1) -> float {
    if constexpr (VTr::vec_gate) return at_f32(Gs + i * GL, d, e);
    else if constexpr (VTr::gated) return gate_at<VAR, K>(Gs, i, d);
    else return 0.f;
  };
  auto Gam = [&](int i, int d, int e = -1) -> float {
    if constexpr (VTr::gated) return exp_ftz(Gat(i, d, e));
    else return 1.f;
  };
  // Erase coefficient b_id (β_i for the β-variants).
  auto bco = [&](int i, int d, int e = -1) -> float {
    if constexpr (VAR == kGDN2) return at_bf16(bsm + i * KP, d, e);  // loaded at phase 3
    else return betas[i];
  };
  auto qv = [&](int i, int d, int e = -1) { return at_bf16(qs + i * KP, d, e); };
  auto kv = [&](int i, int d, int e = -1) { return at_bf16(ks + i * KP, d, e); };

  float dq[1][NTK][4], dk[1][NTK][4], dG[1][NTK][4], db[1][NTK][4];  // db: GDN2's ∂b only
  frag_zero(dq);
  frag_zero(dk);
  frag_zero(dG);
  frag_zero(db);
  // ∂b_id (GDN2) accumulates per element; the β-variants' ∂β_i is its row sum, reduced into
  // rowacc where each term arises (a [C][K] accumulator held across phases cost them 32 registers).
  auto add_db = [&](int j, int e, float x, float& rs0, float& rs1) {
    if constexpr (VAR == kGDN2) db[0][j][e] += x;
    else (e < 2 ? rs0 : rs1) += x;
  };
  auto flush_db = [&](float rs0, float rs1) {
    if constexpr (VAR != kGDN2) row_pair_add(rs0, rs1, m0, rowacc);
  };
  float tmp[1][NTK][4];

  // R_W's direct gradients (Y_W = B ⊙ K ⊙ Γ), then R_W to its tile for ∂A.
  auto rw_epilogue = [&](float (&acc)[1][NTK][4]) {
    if constexpr (kFac) {
      tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) { db[0][j][e] += Gam(r, d, e) * acc[0][j][e]; });
    } else {
      float rs0 = 0.f, rs1 = 0.f;
      tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
        const float x = acc[0][j][e], gm = Gam(r, d, e), co = bco(r, d, e), kk = kv(r, d, e);
        dk[0][j][e] += co * gm * x;
        add_db(j, e, kk * gm * x, rs0, rs1);
        dG[0][j][e] += co * kk * gm * x;
      });
      flush_db(rs0, rs1);
    }
    if constexpr (kEForm) return;  // ∂A needs R_U alone
    if constexpr (kWgDA) frag_store_bf16_sw<kChunk>(acc, RWb, m0, nK);
    else if constexpr (REWY) frag_store_bf16(acc, RWb, KP, m0, nK);
  };

  // ---- phase 1: ∂Q̂ = s ∂O Hᵀ, ∂P = s tril(∂O Eᵀ), the last-row state term. (∂K̄ = E ∂H⁺ᵀ waits for
  // phase 5, where its ∂G part is added after the reverse cumsum.)
  if constexpr (!kStackH) {
    float acc[1][NTK][4];
    if constexpr (kSW) {
      wg_fragment<NTK, V, K>(acc, dOs, Hb, nK);
    } else {
      frag_zero(acc);
      warp_mma<1, NTK, Lay::RowMajor, Lay::ColMajor, kPrefetchP1>(acc, dOs, VP, Hb, VP, m0, nK, 0, V);
    }
    tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
      const float x = p.scale * acc[0][j][e], gm = Gam(r, d, e);
      dq[0][j][e] += gm * x;
      if constexpr (!kFac) dG[0][j][e] += qv(r, d, e) * gm * x;
    });
  }
  cp_async_wait<1>();
  if constexpr (kSW) wg::fence_smem_writes();
  __syncthreads();  // E has landed
  {
    float acc[1][NTC][4];
    if constexpr (kSW) {  // every column block (gated_entry keeps r > cc)
      wg_fragment<NTC, V, kChunk>(acc, dOs, Es, cn0);
    } else {
      frag_zero(acc);
      warp_mma<1, NTC, Lay::RowMajor, Lay::ColMajor, kPrefetchP1>(acc, dOs, VP, Es, VP, cm0, cn0, 0, V, kTriP1 ? cm0 + kBlock : kAllColumns);
    }
    // The diagonal (decay factor 1) goes straight to ∂q, ∂k in phase 5: its two ∂G terms cancel
    // exactly, and keeping them out of the contractions keeps ∂G free of that cancellation.
    frag_for_each(acc, cm0, cn0, [&](int r, int cc, float& x) {
      if (r == cc) dPdiag[r] = p.scale * x;
      x = gated_entry<VAR, K>(p.scale * x, Gs, r, cc, r > cc);
    });
    frag_store_bf16(acc, dPb, kCP, cm0, cn0);
  }
  cp_async_wait<0>();
  __syncthreads();  // k, 𝒯 and ∂H⁺ have landed
  if constexpr (VTr::gated) {  // e^γ ⊙ Σ_v H ⊙ ∂H⁺ (row d of the state)
    // A thread sums one part of a row with 16-byte loads (consecutive threads: consecutive rows,
    // free of bank conflicts; load8_shared: load8's were split into 4-byte loads, four to a bank).
    // A warp per row with a shuffle reduction after each was a chain of 16 reductions per warp:
    // GDN's phase 1 took 14k cycles, DeltaNet's (without this sum) 4k.
    constexpr int kParts = NT / K, kCols = V / kParts;
    static_assert(NT % K == 0 && V % (8 * kParts) == 0, "row parts must tile the state");
    const int d = threadIdx.x % K, c0 = (threadIdx.x / K) * kCols;
    float s = 0.f;
#pragma unroll
    for (int cc = 0; cc < kCols; cc += 8) {
      float hv[8], dhv[8];
      load8_shared(hv, kSW ? Hb + wg::tile_offset<K>(d, c0 + cc) : Hb + d * VP + c0 + cc);
      load8_shared(dhv, kSW ? dHb + wg::tile_offset<K>(d, c0 + cc) : dHb + d * VP + c0 + cc);
#pragma unroll
      for (int e = 0; e < 8; ++e) s += hv[e] * dhv[e];
    }
    atomicAdd(&colacc[d], exp_ftz(Gat(kChunk - 1, d)) * s);
  }
  __syncthreads();
  phase_mark(p.phase_cycles, 1);

  // ---- phase 2: ∂W = −∂E Hᵀ, R_U = 𝒯ᵀ ∂E (= ∂Y_U), ∂v, ∂ω, ∂β from ω; baseline: ∂𝒯 of the V half.
  if constexpr (!L::kOwnDE && !kEarlyDE && !kStackH) load_dE();
  // v and w (GDN2) straight from global memory into registers in R_U's fragment layout (column
  // pairs as one 4-byte load), issued before this phase's products so that their latency hides
  // behind them: read after the products, the loads stood exposed at the end of the phase.
  uint32_t vraw[2][NTV], wraw[2][NTV];
  {
    const int lane = threadIdx.x & 31, r0 = m0 + (lane >> 2);
    const int64_t at0 = baseV + int64_t(r0) * strideV + nV + 2 * (lane & 3);
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const bool ok = r0 + 8 * hh < len;
      const int64_t at = at0 + 8 * hh * strideV;
#pragma unroll
      for (int j = 0; j < NTV; ++j) {
        vraw[hh][j] = ok ? *reinterpret_cast<const uint32_t*>(p.v + at + 8 * j) : 0u;
        if constexpr (VAR == kGDN2) wraw[hh][j] = ok ? *reinterpret_cast<const uint32_t*>(p.w + at + 8 * j) : 0u;
      }
    }
  }
  if constexpr (!kEarlyDE && !kStackH) tiles_landed<kSW>();  // (∂E for phase 2's ∂W)
  auto load_WU = [&] {
    if constexpr (kWgDA) {
      async_tile_sw128<kChunk, K, NT, kStepRows>(Ws, p.W + baseK, strideK, len);
      async_tile_sw128<kChunk, V, NT, kStepRows>(Us, p.U + baseV, strideV, len);
    } else {
      load_tile<kChunk, K, NT, kStepRows>(Ws, KP, p.W + baseK, strideK, len);
      load_tile<kChunk, V, NT, kStepRows>(Us, VP, p.U + baseV, strideV, len);
    }
  };
  if constexpr (kEarlyWU && !kEForm) load_WU();  // phase 3's W and U, behind this phase (∂H⁺ in S2 was read in phase 1)
  // acc = −A Hᵀ for A [C][V] in ∂E's layout (∂E: ∂W; R_U: R_W = 𝒯ᵀ∂W).
  auto minus_times_Ht = [&](float (&acc)[1][NTK][4], const bf16_t* A) {
    if constexpr (kSW) {
      wg_fragment<NTK, V, K>(acc, A, Hb, nK);
    } else {
      frag_zero(acc);
      warp_mma<1, NTK, Lay::RowMajor, Lay::ColMajor, kPrefetchP2>(acc, A, VP, Hb, kLdH, m0, nK, 0, V);
    }
    frag_for_each(acc, m0, nK, [&](int, int, float& x) { x = -x; });
  };
  if constexpr (!kRW3) {
    float acc[1][NTK][4];
    minus_times_Ht(acc, dEs);
    frag_store_bf16(acc, dWb, KP, m0, nK);
  }
  {
    float acc[1][NTV][4], out[1][NTV][4], rsum[1][NTV][4];
    frag_zero(acc);
    // (𝒯ᵀ is upper triangular: row block I starts at k = 16 I, here and in every 𝒯ᵀ product below)
    warp_mma<1, NTV, Lay::ColMajor, Lay::RowMajor, kPrefetchP2>(acc, Tb, kCP, dEs, kLdDE, m0, nV, m0, kChunk);
    {
      const int r0 = m0 + ((threadIdx.x & 31) >> 2);
      auto pair = [](const uint32_t& u) { return bf2f2(reinterpret_cast<const bf16_t*>(&u)); };
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int r = r0 + 8 * hh;
#pragma unroll
        for (int j = 0; j < NTV; ++j) {
          const float2 vr = pair(vraw[hh][j]);
          float2 om = make_float2(betas[r], betas[r]);
          if constexpr (VAR == kGDN2) om = pair(wraw[hh][j]);
          out[0][j][2 * hh] = om.x * acc[0][j][2 * hh];  // ∂v = Ω ⊙ R_U
          out[0][j][2 * hh + 1] = om.y * acc[0][j][2 * hh + 1];
          rsum[0][j][2 * hh] = vr.x * acc[0][j][2 * hh];  // ∂ω = V ⊙ R_U
          rsum[0][j][2 * hh + 1] = vr.y * acc[0][j][2 * hh + 1];
        }
      }
    }
    if constexpr (kStackH) {
      // ∂v waits in registers: S5 still holds ∂E for the other warps' R_U products.
      row_reduce_add<NTV>(rsum, m0, rowacc);
      frag_store_bf16(acc, RUb, VP, m0, nV);
      __syncthreads();  // R_U is complete and ∂E (S5) read: S5 takes ∂v
      frag_store_bf16(out, dvst, VP, m0, nV);
      // [s ∂O; −R_U] Hᵀ: H's fragments loaded once for ∂Q̂ and R_W, both scaled by Γ.
      float aq[1][NTK][4], aw[1][NTK][4];
      frag_zero(aq);
      frag_zero(aw);
      warp_mma_pair<NTK, Lay::RowMajor, Lay::ColMajor>(aq, aw, dOs, RUb, VP, Hb, VP, m0, nK, 0, V);
      tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
        const float gm = Gam(r, d, e);
        dq[0][j][e] += gm * (p.scale * aq[0][j][e]);
        db[0][j][e] -= gm * aw[0][j][e];
      });
    } else if constexpr (kStageDV) {
      if constexpr (!kStageS5) __syncthreads();  // every warp's ∂W product has read H: S1 takes ∂v (and ∂w)
      // GDN2: every R_U product has read ∂E (S5), so b travels from here, not from phase 3.
      if constexpr (VAR == kGDN2 && kEarlyDE) load_tile<kChunk, K, NT, kStepRows>(bsm, KP, p.b + baseK, strideK, len);
      frag_store_bf16(out, dvst, VP, m0, nV);
      if constexpr (VAR == kGDN2) frag_store_bf16(rsum, dwst, VP, m0, nV);
    } else if constexpr (L::kOwnDE) {
      frag_store_bf16(out, dvs, VP, m0, nV);  // leaves in 16-byte rows in phase 3
    } else {
      frag_store_global(out, p.dv + baseV, strideV, m0, nV, len);
    }
    if constexpr (VAR == kGDN2 && !kStageDV) frag_store_global(rsum, p.dw + baseV, strideV, m0, nV, len);
    if constexpr (!kStackH) {
      if constexpr (VAR != kGDN2) row_reduce_add<NTV>(rsum, m0, rowacc);
      if constexpr (kWgDA) frag_store_bf16_sw<kChunk>(acc, RUb, m0, nV);
      else if constexpr (REWY) frag_store_bf16(acc, RUb, VP, m0, nV);
    }
  }
  if constexpr (kRW3 && !kStackH) {  // R_W = −R_U Hᵀ
    if constexpr (kWgDA) wg::fence_smem_writes();
    __syncthreads();  // R_U is complete (and ∂E, in S4, read)
    float rw[1][NTK][4];
    minus_times_Ht(rw, RUb);
    rw_epilogue(rw);
  }
  if constexpr (!REWY) {
    __syncthreads();  // ∂W has read H; Y_U takes the slot of E (RUb is not used by the baseline)
    load_tile<kChunk, V, NT, kStepRows>(YU, VP, p.v + baseV, strideV, len);
    if constexpr (VAR == kGDN2) load_tile<kChunk, V, NT, kStepRows>(wsm, VP, p.w + baseV, strideV, len);
    tiles_landed();
    omega_scale_rows<VAR, V, NT>(YU, wsm, betas);  // Y_U = Ω ⊙ V
    __syncthreads();
    float acc[1][NTC][4];  // B1, V half: ∂E Y_Uᵀ
    frag_zero(acc);
    warp_mma<1, NTC, Lay::RowMajor, Lay::ColMajor, kPrefetchP2>(acc, dEs, kLdDE, YU, VP, cm0, cn0, 0, V);
    frag_for_each(acc, cm0, cn0, [&](int r, int cc, float& x) { dTf[r * LDF + cc] = x; });
  }
  __syncthreads();
  phase_mark(p.phase_cycles, 2);

  // ---- phase 3: R_W = 𝒯ᵀ ∂W (= ∂Y_W) and its direct gradients; then ∂A.
  if constexpr (REWY && !kEarlyWU && !kEForm) load_WU();
  if constexpr (VAR == kGDN2 && !kEarlyDE) load_tile<kChunk, K, NT, kStepRows>(bsm, KP, p.b + baseK, strideK, len);
  if constexpr (kStageDV) {  // before tiles_landed's barrier: R_W then takes S1
    store_tile_rows<kChunk, V, NT>(p.dv + baseV, strideV, dvst, VP, len);
    if constexpr (VAR == kGDN2) store_tile_rows<kChunk, V, NT>(p.dw + baseV, strideV, dwst, VP, len);
  }
  tiles_landed();
  if constexpr (L::kOwnDE) store_tile_rows<kChunk, V, NT>(p.dv + baseV, strideV, dvs, VP, len);
  if constexpr (!REWY) {
    for_each_row_octet<kChunk, K, NT>([&](int i, int d0) {  // Y_W = B ⊙ K ⊙ Γ
      float co[8], x[8], G[8];
      load_row_coef8<VAR, KP>(co, betas, bsm, i, d0);
      gate_at8<VAR, K>(G, Gs, i, d0);
      load8(x, ks + i * KP + d0);
#pragma unroll
      for (int e = 0; e < 8; ++e) x[e] = co[e] * (VTr::gated ? exp_ftz(G[e]) : 1.f) * x[e];
      store8(Ws + i * KP + d0, x);
    });
    __syncthreads();
  }
  if constexpr (!kRW3) {
    float acc[1][NTK][4];
    frag_zero(acc);
    warp_mma<1, NTK, Lay::ColMajor, Lay::RowMajor, kPrefetch>(acc, Tb, kCP, dWb, KP, m0, nK, kTriP3 ? m0 : 0, kChunk);
    rw_epilogue(acc);
  }
  float dA[1][NTC][4];
  frag_zero(dA);
  if constexpr (kEForm) {
    __syncthreads();
    // ∂A = −stril(R_U Eᵀ) (column tiles above the diagonal block are masked: skipped), by warp
    // products for every variant: DeltaNet's and GDN's on warpgroups spilled (kEForm says).
    constexpr int kLdRE = kSW ? -kChunk : VP;  // R_U's and E's (−rows: swizzled)
    warp_mma<1, NTC, Lay::RowMajor, Lay::ColMajor, kPrefetch>(dA, RUb, kLdRE, Es, kLdRE, cm0, cn0, 0, V, kTriP3 ? cm0 + kBlock : kAllColumns);
  } else if constexpr (kWgDA) {
    wg::fence_smem_writes();  // R_W, R_U and this thread's landed W, U, for wgmma's async proxy
    __syncthreads();
    wg::gemm_issue<8 * NTC, K, wg::Major::K, wg::Major::K, kChunk>(reinterpret_cast<float(&)[4 * NTC]>(dA), RWb,
                                                                   Ws + cn0 * wg::kPanel, false);
    wg::gemm_issue<8 * NTC, V, wg::Major::K, wg::Major::K, kChunk>(reinterpret_cast<float(&)[4 * NTC]>(dA), RUb,
                                                                   Us + cn0 * wg::kPanel, true);
    wg::commit();
    wg::wait<0>();
  } else if constexpr (REWY) {
    __syncthreads();
    // R2: ∂A = −stril(R_W Wᵀ + R_U Uᵀ) (column tiles above the diagonal block are masked: skipped)
    warp_mma<1, NTC, Lay::RowMajor, Lay::ColMajor, kPrefetch>(dA, RWb, KP, Ws, KP, cm0, cn0, 0, K, kTriP3 ? cm0 + kBlock : kAllColumns);
    warp_mma<1, NTC, Lay::RowMajor, Lay::ColMajor, kPrefetch>(dA, RUb, VP, Us, VP, cm0, cn0, 0, V, kTriP3 ? cm0 + kBlock : kAllColumns);
  } else {
    // B1, K half: ∂𝒯 += ∂W Y_Wᵀ, masked; B3: Z = ∂𝒯 𝒯ᵀ; B4: ∂A = −stril(𝒯ᵀ Z).
    float acc[1][NTC][4];
    frag_zero(acc);
    warp_mma<1, NTC, Lay::RowMajor, Lay::ColMajor, kPrefetch>(acc, dWb, KP, Ws, KP, cm0, cn0, 0, K, kTriP3 ? cm0 + kBlock : kAllColumns);
    frag_for_each(acc, cm0, cn0, [&](int r, int cc, float& x) { x = r > cc ? x + dTf[r * LDF + cc] : 0.f; });
    frag_store_bf16(acc, dTb, kCP, cm0, cn0);
    __syncthreads();
    frag_zero(acc);
    warp_mma<1, NTC, Lay::RowMajor, Lay::ColMajor, kPrefetch>(acc, dTb, kCP, Tb, kCP, cm0, cn0, 0, kTriP3 ? cn0 + 8 * NTC : kChunk);  // 𝒯 lower: k <= column
    __syncthreads();  // dTb and dTf are dead
    frag_store_bf16(acc, Zb, kCP, cm0, cn0);
    __syncthreads();
    warp_mma<1, NTC, Lay::ColMajor, Lay::RowMajor, kPrefetch>(dA, Tb, kCP, Zb, kCP, cm0, cn0, kTriP3 ? cm0 : 0, kChunk);
  }
  frag_for_each(dA, cm0, cn0, [&](int r, int cc, float& x) { x = gated_entry<VAR, K>(-x, Gs, r, cc, r > cc); });
  frag_store_bf16(dA, dAb, kCP, cm0, cn0);
  constexpr bool kGram = VAR == kGDN && !REWY;  // FLA's GDN baseline: ∂g through the key Gram (B5)
  if constexpr (kGram) frag_for_each(dA, cm0, cn0, [&](int r, int cc, float& x) { dAf[r * LDF + cc] = x; });
  __syncthreads();
  phase_mark(p.phase_cycles, 3);

  // ---- phase 4: key contractions D^r = Σ_j ∂A_ij k_j e^{G_i − G_j}, D^c, and the same for ∂P.
  // The row (erase) coefficient multiplies D^r; ∂β/∂b collect k ⊙ (Γ R_W + D^r) (add_db).
  // Scalar or no gates: phase 5's E and ∂H⁺ start loading here, behind the contractions (their
  // slots S3 and S2 held R_U, R_W and the baseline's 𝒯 scratch, all read in phase 3; the GDN
  // baseline's key-Gram pass still needs S3 for ∂A). Channel gates use S2-S3 for the packed
  // operands and load them in phase 5.
  constexpr bool kEarlyE = !VTr::vec_gate && !kGram, kEarlyDH = !VTr::vec_gate;
  if constexpr (kEarlyDH) load_dH();
  if constexpr (kEarlyE && !kDKS) load_E();
  // Channel gates: the row contractions' rescaling of output (r, d) out of block I's frame,
  // e^{G_rd − G_ref(I) d}, and the column contractions' out of block J's, e^{G_ref(J) d − G_rd}.
  [[maybe_unused]] auto row_scale = [&](int I, int r, int d, int e) {
    return exp_ftz(at_f32(Gs + r * GL, d, e) - at_f32(Gs + block_ref_row(I) * GL, d, e));
  };
  [[maybe_unused]] auto col_scale = [&](int J, int r, int d, int e) {
    return exp_ftz(at_f32(Gs + block_ref_row(J) * GL, d, e) - at_f32(Gs + r * GL, d, e));
  };
  if constexpr (!VTr::vec_gate) {
    for_each_row_octet<kChunk, K, NT>([&](int i, int d0) {  // (β ⊙ K) for D^c
      float x[8];
      load8(x, ks + i * KP + d0);
#pragma unroll
      for (int e = 0; e < 8; ++e) x[e] *= betas[i];
      store8(bK + i * KP + d0, x);
    });
    __syncthreads();
    constexpr bool kGateViaKeys = VAR == kGDN && REWY;  // §7.1 reductions
    float acc[1][NTK][4];
    // R3 row half of ∂A: Γˢ ⊙ ∂A times K, into dk, ∂β and (GDN) dG.
    auto dA_rows = [&](float (&x)[1][NTK][4]) {
      if constexpr (kFac) {
        tile_for<NTK>(m0, nK, [&](int j, int e, int, int) { db[0][j][e] += x[0][j][e]; });
      } else {
        float rs0 = 0.f, rs1 = 0.f;
        tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
          const float v = x[0][j][e];
          dk[0][j][e] += betas[r] * v;
          add_db(j, e, kv(r, d, e) * v, rs0, rs1);
          if constexpr (kGateViaKeys) dG[0][j][e] += betas[r] * kv(r, d, e) * v;
        });
        flush_db(rs0, rs1);
      }
    };
    // ∂P row: Γˢ ⊙ ∂P times K, into dq and dG.
    auto dP_rows = [&](float (&x)[1][NTK][4]) {
      tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
        dq[0][j][e] += x[0][j][e];
        if constexpr (!kFac) dG[0][j][e] += qv(r, d, e) * x[0][j][e];
      });
    };
    // DeltaNet: the two row products against K in one k-loop, K's fragments loaded once for both
    // (warp_mma_pair): ReWY kernel 1.033x, baseline 1.010x; GDN's spilled (16 bytes) and lost 3.1%,
    // with ∂P's epilogue first 12 bytes and 1.8% (H200, 2026-12-01, docs/measurements/2026-12-01-s14/
    // and -s15/).
    // With the factored accumulators (no spill), GDN's ReWY kernel paired lost 0.8% (EXP 10, H200,
    // 2026-12-02, docs/measurements/2026-12-02-s27/call2-decide/).
    constexpr bool kRowPair = VAR == kDeltaNet;
    if constexpr (kRowPair) {
      float acc2[1][NTK][4];
      frag_zero(acc);
      frag_zero(acc2);
      warp_mma_pair<NTK, Lay::RowMajor, Lay::RowMajor, kPrefetch>(acc, acc2, dAb, dPb, kCP, ks, KP, m0, nK, 0,
                                                                  kTri ? m0 + kBlock : kChunk);
      dA_rows(acc);
      dP_rows(acc2);
    } else {
      frag_zero(acc);
      warp_mma<1, NTK, Lay::RowMajor, Lay::RowMajor, kPrefetch>(acc, dAb, kCP, ks, KP, m0, nK, 0, kTri ? m0 + kBlock : kChunk);
      dA_rows(acc);
    }
    frag_zero(acc);  // R3 column half: (Γˢ ⊙ ∂A)ᵀ (β ⊙ K)
    warp_mma<1, NTK, Lay::ColMajor, Lay::RowMajor, kPrefetch>(acc, dAb, kCP, bK, KP, m0, nK, kTri ? m0 : 0, kChunk);
    tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
      dk[0][j][e] += acc[0][j][e];
      if constexpr (kGateViaKeys && !kFac) dG[0][j][e] -= kv(r, d, e) * acc[0][j][e];
    });
    if constexpr (!kRowPair) {
      frag_zero(acc);
      warp_mma<1, NTK, Lay::RowMajor, Lay::RowMajor, kPrefetch>(acc, dPb, kCP, ks, KP, m0, nK, 0, kTri ? m0 + kBlock : kChunk);
      dP_rows(acc);
    }
    frag_zero(acc);  // ∂P column: (Γˢ ⊙ ∂P)ᵀ Q
    warp_mma<1, NTK, Lay::ColMajor, Lay::RowMajor, kPrefetch>(acc, dPb, kCP, qs, KP, m0, nK, kTri ? m0 : 0, kChunk);
    tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
      dk[0][j][e] += acc[0][j][e];
      if constexpr (!kFac) dG[0][j][e] -= kv(r, d, e) * acc[0][j][e];
    });
    if constexpr (kGram) {  // B5: Σ_j (M ⊙ A⁰)_ij − Σ_j (M ⊙ A⁰)_ji with A⁰ = β_i k_i·k_j
      float s[1][NTC][4];
      frag_zero(s);
      warp_mma<1, NTC, Lay::RowMajor, Lay::ColMajor, kPrefetch>(s, ks, KP, ks, KP, cm0, cn0, 0, K);
      float rows[1][NTC][4];
      tile_for<NTC>(cm0, cn0, [&](int j, int e, int r, int cc) {
        rows[0][j][e] = r > cc ? dAf[r * LDF + cc] * betas[r] * s[0][j][e] : 0.f;
      });
      row_reduce_add<NTC>(rows, cm0, rowg);
      frag_for_each(rows, cm0, cn0, [&](int, int, float& x) { x = -x; });
      col_reduce_add<NTC>(rows, cn0, rowg);
    }
  } else if constexpr (kOnePack) {
    // One copy of each operand a row, in its own block's frame: KC[j] = k_j e^{G_ref(B) − G_j} (and
    // its second bf16 term), RCbk[i] = (b ⊙ k)_i e^{G_i − G_ref(B)}, RCq[i] = q_i e^{G_i − G_ref(B)}
    // for the rows of block B, all four in one pass (64 rows each, where the packed per-block
    // operands take 160: rows of earlier blocks copied into every later frame). A contraction over
    // blocks B moves between frames on its accumulator, whose columns are the channels:
    //   Σ_{B<=I} e^{G_ref(I) − G_ref(B)} P_B = (((P_0 ρ_1 + P_1) ρ_2 + P_2) ...) with
    //   ρ_b = e^{G_ref(b) − G_ref(b−1)} <= 1 per channel (rows: B up to I; columns: B down to J,
    //   the same factors). The bf16 roundings are of the same size as the packed operands'.
    // KDA's kernel 747.5 -> 685.7 us at shape 0 (the build 3860 -> 2452 cycles, the contractions with
    // the second build 7828 -> 4528), GDN2's 817.1 -> 742.5 us; Recompute backward 1.059x / 1.063x
    // (H200, 2026-12-03, docs/measurements/2026-12-03-s38/call1/). The B loops stay rolled: unrolled,
    // KDA's kernel spilled 16 bytes at the 128-register cap (none rolled, 123 registers).
    static_assert(kFac && (VAR == kKDA || EXP == 7 || EXP == 17), "one-pack phase 4: the factored, paired kernels");
    static_assert(L::S1_bytes >= 2 * L::tile_k && L::S2_bytes >= 2 * L::tile_k && L::S3_bytes >= 4 * K * 4,
                  "one-pack phase 4: KC and its second term in S1, RCbk and RCq in S2, ρ in S3");
    const int I = warp & 3;  // this warp's row block: its m0 = 16 I
    bf16_t* const kc = reinterpret_cast<bf16_t*>(S1);
    bf16_t* const kc_lo = reinterpret_cast<bf16_t*>(S1 + L::tile_k);
    bf16_t* const rcbk = reinterpret_cast<bf16_t*>(S2);
    bf16_t* const rcq = reinterpret_cast<bf16_t*>(S2 + L::tile_k);
    float* const rho = reinterpret_cast<float*>(S3);  // [4][K], row b >= 1: ρ_b
    for (int x = threadIdx.x; x < 3 * K; x += NT) {
      const int b = 1 + x / K, d = x % K;
      rho[b * K + d] = exp_ftz(Gs[block_ref_row(b) * GL + d] - Gs[block_ref_row(b - 1) * GL + d]);
    }
    for_each_row_octet<kChunk, K, NT>([&](int r, int d0) {
      float g[8], gr[8], k[8], x[8];
      load8(g, Gs + r * GL + d0);
      load8(gr, Gs + block_ref_row(r / kBlock) * GL + d0);
      load8(k, ks + r * KP + d0);
#pragma unroll
      for (int e = 0; e < 8; ++e) x[e] = k[e] * exp_ftz(gr[e] - g[e]);
      store8(kc + r * KP + d0, x);
      store8<true>(kc_lo + r * KP + d0, x);
      float co[8], ex[8];
      load_row_coef8<VAR, KP>(co, betas, bsm, r, d0);
#pragma unroll
      for (int e = 0; e < 8; ++e) ex[e] = exp_ftz(g[e] - gr[e]);
#pragma unroll
      for (int e = 0; e < 8; ++e) x[e] = co[e] * k[e] * ex[e];
      store8(rcbk + r * KP + d0, x);
      load8(k, qs + r * KP + d0);
#pragma unroll
      for (int e = 0; e < 8; ++e) x[e] = k[e] * ex[e];
      store8(rcq + r * KP + d0, x);
    });
    __syncthreads();
    phase_mark(p.phase_cycles, 7);  // phase 4's build, apart from its contractions
    auto to_frame = [&](float (&a)[1][NTK][4], float (&b)[1][NTK][4], int blk, bool both) {
      tile_for<NTK>(m0, nK, [&](int j, int e, int, int d) {
        const float f = at_f32(rho + blk * K, d, e);
        a[0][j][e] *= f;
        if (both) b[0][j][e] *= f;
      });
    };
    float acc[1][NTK][4], acc2[1][NTK][4];
    // Rows of block I: D^r (∂A against KC) into acc, D^r_P (∂P against KC's two terms) into acc2.
    frag_zero(acc);
    frag_zero(acc2);
#pragma unroll 1
    for (int B = 0; B <= I; ++B) {  // (I: uniform across the warp)
      if (B > 0) to_frame(acc, acc2, B, true);
      warp_mma_pair<NTK, Lay::RowMajor, Lay::RowMajor>(acc, acc2, dAb, dPb, kCP, kc, KP, m0, nK, kBlock * B, kBlock * (B + 1));
      warp_mma<1, NTK, Lay::RowMajor, Lay::RowMajor>(acc2, dPb, kCP, kc_lo, KP, m0, nK, kBlock * B, kBlock * (B + 1));
    }
    tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
      const float f = row_scale(I, r, d, e);
      db[0][j][e] += acc[0][j][e] * f;
      dq[0][j][e] += acc2[0][j][e] * f;
    });
    // Columns of block J = I: (∂A against RCbk) + (∂P against RCq), blocks B from the last down to J.
    const int J = I;
    frag_zero(acc);
#pragma unroll 1
    for (int B = kChunk / kBlock - 1; B >= J; --B) {
      if (B < kChunk / kBlock - 1) to_frame(acc, acc2, B + 1, false);
      warp_mma<1, NTK, Lay::ColMajor, Lay::RowMajor>(acc, dAb, kCP, rcbk, KP, m0, nK, kBlock * B, kBlock * (B + 1));
      warp_mma<1, NTK, Lay::ColMajor, Lay::RowMajor>(acc, dPb, kCP, rcq, KP, m0, nK, kBlock * B, kBlock * (B + 1));
    }
    tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
      dk[0][j][e] += acc[0][j][e] * col_scale(J, r, d, e);
    });
  } else {
    const int I = warp & 3;  // this warp's row block: its m0 = 16 I
    // KC and its second bf16 term in one pass (the second in S2-S3: R_W and R_U are dead).
    bf16_t* packed2 = reinterpret_cast<bf16_t*>(S2);
    // One pass over the chunk's rows: row j's k and G read once for the rows of every KC_I it
    // enters (rows paired j and 63 − j: mirrored_row). GDN2's kernel 1.021x against a packed row at
    // a time, KDA's even (H200, 2026-12-01).
    for_each_row_octet<kChunk, K, NT>([&](int r, int d0) {
      const int j = mirrored_row(r);
      float g[8], k[8], x[8];
      load8(g, Gs + j * GL + d0);
      load8(k, ks + j * KP + d0);
      packed_col_rows8<K, true>(j, j / kBlock, d0, g, k, x, Gs, packed, packed2);
    });
    __syncthreads();
    phase_mark(p.phase_cycles, 7);  // phase 4's packed build, apart from its contractions
    const int64_t KCI = int64_t(packed_row_offset(I)) * KP;
    float acc[1][NTK][4];
    // KDA: D^r (∂A against KC_I) and D^r_P's first term (∂P against KC_I) in one k-loop, KC_I's
    // fragments loaded once for both, one exponential and one epilogue for the two: ReWY kernel
    // 1.029x, baseline 1.034x, backward 1.011x; GDN2's (76 bytes spilled) lost 2.2%, and 1.9%
    // with D^r's epilogue before D^r_P's second term (H200, 2026-12-01, docs/measurements/2026-12-01-s15/).
    // GDN2 (EXP 7) with the factored accumulators' room: 1.031x against 1.020x without it.
    if constexpr (VAR == kKDA || EXP == 7 || EXP == 17) {
      float acc2[1][NTK][4];
      frag_zero(acc);
      frag_zero(acc2);
      warp_mma_pair<NTK, Lay::RowMajor, Lay::RowMajor, kPrefetch>(acc, acc2, dAb, dPb, kCP, packed + KCI, KP, m0, nK, 0,
                                                                  kBlock * (I + 1));
      warp_mma<1, NTK, Lay::RowMajor, Lay::RowMajor, kPrefetch>(acc2, dPb, kCP, packed2 + KCI, KP, m0, nK, 0, kBlock * (I + 1));
      // Both rescaled by the same e^{G_i − G_ref(I)}: one exponential for the two (8k a CTA fewer).
      if constexpr (kFac) {
        tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
          const float f = row_scale(I, r, d, e);
          db[0][j][e] += acc[0][j][e] * f;
          dq[0][j][e] += acc2[0][j][e] * f;
        });
      } else {
        float rs0 = 0.f, rs1 = 0.f;
        tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
          const float f = row_scale(I, r, d, e);
          const float v = acc[0][j][e] * f, w = acc2[0][j][e] * f;
          const float co = bco(r, d, e), kk = kv(r, d, e);
          dk[0][j][e] += co * v;
          add_db(j, e, kk * v, rs0, rs1);
          dq[0][j][e] += w;
          dG[0][j][e] += co * kk * v + qv(r, d, e) * w;
        });
        flush_db(rs0, rs1);
      }
    } else {
      frag_zero(acc);  // D^r rows of block I: ∂A[I, :16(I+1)] · KC_I, rescaled by e^{G_i − G_ref(I)}
      warp_mma<1, NTK, Lay::RowMajor, Lay::RowMajor, kPrefetch>(acc, dAb, kCP, packed + KCI, KP, m0, nK, 0, kBlock * (I + 1));
      if constexpr (kFac) {
        tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) { db[0][j][e] += acc[0][j][e] * row_scale(I, r, d, e); });
      } else {
        float rs0 = 0.f, rs1 = 0.f;
        tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
          const float x = acc[0][j][e] * row_scale(I, r, d, e);
          const float co = bco(r, d, e), kk = kv(r, d, e);
          dk[0][j][e] += co * x;
          add_db(j, e, kk * x, rs0, rs1);
          dG[0][j][e] += co * kk * x;
        });
        flush_db(rs0, rs1);
      }
      // D^r_P (∂q) with KC in two bf16 terms: with one, its rounding is the largest error in ∂q
      // (twin: KDA dq 3.7e-3 -> 3.3e-3 at T = 64, FLA 3.0e-3).
      frag_zero(acc);
      warp_mma<1, NTK, Lay::RowMajor, Lay::RowMajor, kPrefetch>(acc, dPb, kCP, packed + KCI, KP, m0, nK, 0, kBlock * (I + 1));
      warp_mma<1, NTK, Lay::RowMajor, Lay::RowMajor, kPrefetch>(acc, dPb, kCP, packed2 + KCI, KP, m0, nK, 0, kBlock * (I + 1));
      tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
        const float x = acc[0][j][e] * row_scale(I, r, d, e);
        dq[0][j][e] += x;
        if constexpr (!kFac) dG[0][j][e] += qv(r, d, e) * x;
      });
    }
    // Column contractions: block J of output rows j uses rows i >= 16 J of
    //   RC_J[i][d] = x_id e^{G_id − G_ref(J) d}, x = b ⊙ k (against ∂A, in S1) and q (against ∂P,
    //   in S2), packed at row packed_rc_offset(J) + (i − 16 J); both built in one pass (one
    //   exponential).
    __syncthreads();  // KC's readers are done
    for_each_row_octet<kChunk, K, NT>([&](int r, int d0) {
      packed_rc_rows8<VAR, K>(mirrored_row(r), d0, Gs, qs, ks, betas, bsm, packed2, packed);
    });
    __syncthreads();
    const int J = I;
    const int64_t RCJ = int64_t(packed_rc_offset(J) - kBlock * J) * KP;  // row i of RC_J at RCJ + i KP
    // One accumulator for both products, one epilogue: their rescaling e^{G_ref(J) − G_r} is the
    // same. KDA's ReWY kernel 847.4 -> 832.4 us (1.018x), baseline 1.013x; GDN2's 1.003x / 1.005x
    // alone (it spilled here before 𝒯's zero blocks were skipped; H200, 2026-12-01).
    frag_zero(acc);
    warp_mma<1, NTK, Lay::ColMajor, Lay::RowMajor, kPrefetch>(acc, dAb, kCP, packed + RCJ, KP, m0, nK, kBlock * J, kChunk);
    warp_mma<1, NTK, Lay::ColMajor, Lay::RowMajor, kPrefetch>(acc, dPb, kCP, packed2 + RCJ, KP, m0, nK, kBlock * J, kChunk);
    tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
      const float x = acc[0][j][e] * col_scale(J, r, d, e);
      dk[0][j][e] += x;
      if constexpr (!kFac) dG[0][j][e] -= kv(r, d, e) * x;
    });
  }

  // ---- phase 5: ∂K̄ = E ∂H⁺ᵀ; outputs dq, dk, (db | dβ); ∂g.
  // G restarts per chunk, so ∂g_t = Σ_{i >= t} ∂G_i. K̄_j = k_j e^{γ − G_j} depends on g_t for t > j
  // only: its part of ∂g_t is the exclusive prefix Σ_{j < t} K̄_j ∂K̄_j, added after the cumsum
  // (§8 writes it as −K̄_i ∂K̄_i per row plus the total on the last row, which cancels O(1) terms).
  __syncthreads();  // phase-4 readers of S1 are done
  phase_mark(p.phase_cycles, 4);
  if constexpr (!kEarlyE) load_E();
  if constexpr (!kEarlyDH) load_dH();
  // The factored sums to ∂k, ∂b (GDN2) or ∂β's rows, and ∂G (channel gates: stored; scalar: row sums).
  auto convert_factored = [&] {
    float rs0 = 0.f, rs1 = 0.f, g0 = 0.f, g1 = 0.f;
    tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
      const float co = bco(r, d, e), kk = kv(r, d, e), x = db[0][j][e], y = dk[0][j][e];
      const float g = qv(r, d, e) * dq[0][j][e] + kk * (co * x - y);
      if constexpr (VTr::vec_gate) Gd[r * GL + d] = g;
      else (e < 2 ? g0 : g1) += g;
      dk[0][j][e] = co * x + y;
      if constexpr (VAR == kGDN2) db[0][j][e] = kk * x;
      else (e < 2 ? rs0 : rs1) += kk * x;
    });
    flush_db(rs0, rs1);
    if constexpr (VTr::scalar_gate) row_pair_add(g0, g1, m0, rowg);
  };
  if constexpr (kFac) {
    convert_factored();
  } else if constexpr (VTr::vec_gate) {
    tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) { Gd[r * GL + d] = dG[0][j][e]; });
  }
  tiles_landed<kSW>();
  {
    float acc[1][NTK][4];
    if constexpr (kDKS) {
      tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) { acc[0][j][e] = bf2f(dHb[r * KP + d]); });
    } else if constexpr (kSW) {
      wg_fragment<NTK, V, K>(acc, Es, dHb, nK);
    } else {
      frag_zero(acc);
      warp_mma<1, NTK, Lay::RowMajor, Lay::ColMajor, kPrefetch>(acc, Es, VP, dHb, VP, m0, nK, 0, V);
    }
    tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) {
      const float x = acc[0][j][e];
      const float f = VTr::gated ? exp_ftz(Gat(kChunk - 1, d, e) - Gat(r, d, e)) : 1.f;  // e^{γ − G} <= 1
      dk[0][j][e] += f * x;
      tmp[0][j][e] = kv(r, d, e) * f * x;  // K̄ ⊙ ∂K̄
      dq[0][j][e] += dPdiag[r] * kv(r, d, e);
      dk[0][j][e] += dPdiag[r] * qv(r, d, e);
    });
    __syncthreads();  // E, ∂H⁺, q and k are read; S2 takes K̄ ⊙ ∂K̄
    if constexpr (VTr::vec_gate) tile_for<NTK>(m0, nK, [&](int j, int e, int r, int d) { KbdKb[r * GL + d] = tmp[0][j][e]; });
    if constexpr (VTr::scalar_gate) row_reduce_add<NTK>(tmp, m0, rowkb);
  }
  // dq, dk (and GDN2's db) leave through shared memory in 16-byte rows, in the slots of q, k and
  // ∂W (S5): fragment-layout stores to global memory are 4 bytes a thread.
  frag_store_bf16(dq, qs, KP, m0, nK);
  frag_store_bf16(dk, ks, KP, m0, nK);
  if constexpr (VAR == kGDN2) frag_store_bf16(db, dbs, KP, m0, nK);
  if constexpr (VTr::scalar_gate && !kFac) row_reduce_add<NTK>(dG, m0, rowg);
  __syncthreads();  // row and column atomics have landed; dq, dk (db) are staged
  store_tile_rows<kChunk, K, NT>(p.dq + baseK, strideK, qs, KP, len);
  store_tile_rows<kChunk, K, NT>(p.dk + baseK, strideK, ks, KP, len);
  if constexpr (VAR == kGDN2) store_tile_rows<kChunk, K, NT>(p.db + baseK, strideK, dbs, KP, len);
  phase_mark(p.phase_cycles, 5);
  if constexpr (VTr::has_beta)
    if (int(threadIdx.x) < len) p.dbeta[int64_t(tok0 + threadIdx.x) * p.H + h] = f2bf(rowacc[threadIdx.x]);
  // The reverse cumsum stays on chip and every ∂g is stored once: adding the prefix to values
  // already in global memory put a load after each store on the chain, 64 round trips per thread.
  if constexpr (VTr::vec_gate) {
    // Every thread scans kRows rows of one column in registers (a thread per column walked all 64
    // rows twice: 5% of KDA's cycles with three quarters of the block idle); the parts' totals meet
    // in S3 (E's slot, read before the barrier that opened S2 to K̄ ⊙ ∂K̄). (On the fragments instead,
    // by shuffles, with ∂g stored from them and no fp32 tiles: KDA's backward 0.968x, GDN2's 0.970x;
    // H200, 2026-12-03, experiment dgreg, docs/measurements/2026-12-03-s38/call3/.)
    constexpr int kParts = NT / K, kRows = kChunk / kParts;
    static_assert(NT % K == 0 && kChunk % kParts == 0, "column parts must tile the chunk");
    float* partG = reinterpret_cast<float*>(S3);  // [kParts][K] Σ of the part's valid ∂G rows
    float* partKb = partG + kParts * K;            // [kParts][K] Σ of the part's K̄ ⊙ ∂K̄ rows
    const int d = threadIdx.x % K, part = threadIdx.x / K, i0 = part * kRows;
    float suf[kRows], pre[kRows], sg = 0.f, sk = 0.f;
#pragma unroll
    for (int r = kRows - 1; r >= 0; --r) {
      sg += i0 + r < len ? Gd[(i0 + r) * GL + d] : 0.f;
      suf[r] = sg;
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {  // (rows >= len feed only rows >= len, which are not stored)
      pre[r] = sk;
      sk += KbdKb[(i0 + r) * GL + d];
    }
    partG[part * K + d] = sg;
    partKb[part * K + d] = sk;
    __syncthreads();
    float after = colacc[d], before = 0.f;  // the state-decay term belongs to the last valid row
    for (int q = part + 1; q < kParts; ++q) after += partG[q * K + d];
    for (int q = 0; q < part; ++q) before += partKb[q * K + d];
    float* dst = p.dg + baseK + d;
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      if (i0 + r < len) dst[int64_t(i0 + r) * strideK] = (suf[r] + after) + (pre[r] + before);
  } else if constexpr (VTr::scalar_gate) {
    if (threadIdx.x < 32) {  // one warp: the suffix sum as a scan of the reversed rows, two a lane
      const int lane = threadIdx.x;
      float c = 0.f;
      for (int d = lane; d < K; d += 32) c += colacc[d];
      c = warp_sum(c);
      const int r0 = kChunk - 1 - 2 * lane, r1 = r0 - 1;  // rows >= len contribute nothing
      const float2 suf = warp_pair_cumsum(r0 < len ? rowg[r0] : 0.f, r1 < len ? rowg[r1] : 0.f);
      // Σ_{j < i} K̄_j ⊙ ∂K̄_j is the inclusive scan of the rows shifted down by one.
      const float2 pre = warp_pair_cumsum(lane > 0 ? rowkb[2 * lane - 1] : 0.f, rowkb[2 * lane]);
      __syncwarp();
      rowg[r0] = c + suf.x;
      rowg[r1] = c + suf.y;
      __syncwarp();
      float* dst = p.dg + int64_t(tok0) * p.H + h;
      if (2 * lane < len) dst[int64_t(2 * lane) * p.H] = rowg[2 * lane] + pre.x;
      if (2 * lane + 1 < len) dst[int64_t(2 * lane + 1) * p.H] = rowg[2 * lane + 1] + pre.y;
    }
  }
  phase_mark(p.phase_cycles, 6);  // thread 0's view: it takes part in both ∂g branches
  grad_cta_done(p);
}

}  // namespace rewy::delta::cuda_impl
