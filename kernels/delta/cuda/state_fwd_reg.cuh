// The forward state pass with the state in registers: DeltaNet's and GDN's fused Recompute forward
// at K = 128 (launch_state_fwd_as takes it for DeltaNet at V-slices of 64 and 128 and for GDN at
// 64; REWY_EXPERIMENTS=norpass turns it off, rpass adds GDN at 128).
//
// state_fwd_body holds H by rows, K / 64 blocks of 64 rows on two warpgroups, so every product that
// contracts over K (K H, Q H) reads the whole H from shared memory: each step writes Hᵀ there
// (stmatrix), writes Dᵀ and Eᵀ there for the next products, and meets block barriers between.
// Here each warpgroup holds Hᵀ for 64 columns of V and all K rows, an m64n128 fp32 accumulator,
// and every product of the step takes its left operand from registers (wgmma's register A):
//
//   Dᵀ  = Vᵀ − Hᵀ Kᵀ          A = Hᵀ (registers), B = K  [C][K] K-major (the stage's k tile)
//   Oᵀ  = Hᵀ Qᵀ               A = Hᵀ,             B = Q  [C][K] K-major
//   D'ᵀ = Dᵀ Diag(β)          (p.row_betas; else β is in the stage's 𝒯 Diag(β))
//   Eᵀ  = D'ᵀ 𝒯ᵀ              A = D'ᵀ,            B = 𝒯  [C][C] K-major
//   Hᵀ += Eᵀ K                A = Eᵀ,             B = K  [C][K] MN-major (the same tile)
//   Oᵀ += Eᵀ Pᵀ               A = Eᵀ,             B = P  [C][C] K-major
//
// GDN (GATE: the fused forward's row gates, raw q and k): D'ᵀ's columns by e^{G_c} before V's,
// Oᵀ's Hᵀ Qᵀ by e^{G_c} before Eᵀ Pᵀ is added, Hᵀ by e^γ (its columns) and the update's Eᵀ by
// e^{γ−G_c} (its columns; P's Eᵀ unscaled), as state_fwd_body's fused_gate pass does.
// The step's chain is Hᵀ Kᵀ → D' → Eᵀ → Eᵀ K with no shared-memory round trip and no block
// barrier; the only block barrier a step publishes the next stage's tiles. The rounding points
// are state_fwd_body's (H, D' and E to bf16 as the products' operands), so its twin and bars hold.
// O leaves through a per-warpgroup staging tile (Oᵀ transposed by stmatrix, then 16-byte rows).
#pragma once
#include "kernels/delta/cuda/chunk_fwd.cuh"

namespace rewy::delta::cuda_impl {

// The register pass's fifth phase mark beside wy_prep: a step's wait for its stage's data, apart
// from the barrier and the next prefetch's issue after it (REWY_BESIDE_CLOCK's "data" and "wait").
inline constexpr int kRegPassDataPhase = 4;

// One stage: a chunk's 𝒯 (Diag(β)), k, q, P and this CTA's V-slice of v (swizzled K-major tiles,
// 1024-byte aligned: `st`), and its small part (`sm`): the rows' β (p.row_betas), GATE's e^γ and
// row gates, and the chunk's span. APART: the small parts in a region of their own (sm apart from
// st; RegPassLayout's FOUR), else right after the tiles (sm = st).
template <int K, int BV, bool GATE, bool APART = false>
struct RegStage {
  static constexpr size_t T = 0;                                    // bf16 [C][C]
  static constexpr size_t Kb = T + size_t(kChunk) * kChunk * 2;     // bf16 [C][K]
  static constexpr size_t Qh = Kb + size_t(kChunk) * K * 2;         // bf16 [C][K]
  static constexpr size_t P = Qh + size_t(kChunk) * K * 2;          // bf16 [C][C]
  static constexpr size_t Vs = P + size_t(kChunk) * kChunk * 2;     // bf16 [C][BV]
  static constexpr size_t tiles = Vs + size_t(kChunk) * BV * 2;
  static constexpr size_t rbeta = APART ? 0 : tiles;                // f32 [C] (from sm)
  static constexpr size_t gam = rbeta + kChunk * 4;                 // GATE: e^γ f32 [K]
  static constexpr size_t rows = gam + (GATE ? K * 4 : 0);          // GATE: e^{G_i}, e^{γ−G_i} f32 [2][C]
  static constexpr size_t span = rows + (GATE ? 2 * kChunk * 4 : 0);  // ChunkSpan
  static constexpr size_t small_bytes = APART ? (span + 16 + 15) / 16 * 16 : 0;
  static constexpr size_t bytes = APART ? tiles : (span + 16 + 1023) / 1024 * 1024;

  template <int NT>
  __device__ static void prefetch(char* st, char* sm, const DeltaParams& p, int c, ChunkSpan sp, int h, int v0, int V) {
    const int tok0 = sp.tok0, len = sp.len;
    if (threadIdx.x == 0) *reinterpret_cast<ChunkSpan*>(sm + span) = sp;
    const int64_t strideK = int64_t(p.H) * K, baseK = (int64_t(tok0) * p.H + h) * K;
    const int64_t baseC = (int64_t(tok0) * p.H + h) * kChunk, strideC = int64_t(p.H) * kChunk;
    auto bf = [&](size_t off) { return reinterpret_cast<bf16_t*>(st + off); };
    async_tile_sw128<kChunk, kChunk, NT>(bf(T), p.Tbeta + baseC, strideC, len);
    async_tile_sw128<kChunk, K, NT>(bf(Kb), (GATE ? p.k : p.Kg) + baseK, strideK, len);
    async_tile_sw128<kChunk, K, NT>(bf(Qh), (GATE ? p.q : p.Qg) + baseK, strideK, len);
    async_tile_sw128<kChunk, kChunk, NT>(bf(P), p.P + baseC, strideC, len);
    async_tile_sw128<kChunk, BV, NT>(bf(Vs), p.v + (int64_t(tok0) * p.H + h) * V + v0, int64_t(p.H) * V, len);
    prefetch_small<NT>(sm, p, c, h);
  }
  template <int NT>
  __device__ static void prefetch_small(char* sm, const DeltaParams& p, int c, int h) {
    if (p.row_betas) async_tile<1, kChunk * 4, NT>(sm + rbeta, 0, row_betas_of(p, c, h), 0, 1);
    if constexpr (GATE) {
      async_tile<1, K * 4, NT>(sm + gam, 0, p.gexp + (int64_t(c) * p.H + h) * K, 0, 1);
      async_tile<1, 2 * kChunk * 4, NT>(sm + rows, 0, p.gate_rows + (int64_t(c) * p.H + h) * 2 * kChunk, 0, 1);
    }
  }

  // The tiles by TMA boxes (the pass beside wy_prep): thread 0 arms `bar` and issues 6 + BV / 64
  // boxes where each of 128 threads issued 28 cp.async on the step's chain. A partial chunk arms it
  // for no bytes and takes prefetch's cp.async (a box would bring the next sequence's rows, not
  // zeros). acquired: beside wy_prep, whose generic stores thread 0 acquired through its flags.
  static constexpr uint32_t tma_bytes = uint32_t(2 * kChunk * kChunk + 2 * kChunk * K + kChunk * BV) * 2;
  template <int NT>
  __device__ static void prefetch_tma(char* st, char* sm, const DeltaParams& p, const tma::RegMaps& m, int c, ChunkSpan sp,
                                      int h, int v0, int V, uint64_t* bar, bool acquired) {
    if (sp.len < kChunk) {
      if (threadIdx.x == 0) tma::mbar_arrive_expect(bar, 0);
      return prefetch<NT>(st, sm, p, c, sp, h, v0, V);
    }
    if (threadIdx.x == 0) {
      *reinterpret_cast<ChunkSpan*>(sm + span) = sp;
      if (acquired) tma::fence_proxy_async_global();
      tma::mbar_arrive_expect(bar, tma_bytes);
      constexpr int kPanel = kChunk * 64 * 2;
      auto box = [&](size_t off, const CUtensorMap* map, int c) { tma::load_box(st + off, map, c, h, sp.tok0, bar); };
      box(T, &m.T, 0);
      box(P, &m.P, 0);
#pragma unroll
      for (int i = 0; i < K / 64; ++i) {
        box(Kb + i * kPanel, &m.K, 64 * i);
        box(Qh + i * kPanel, &m.Q, 64 * i);
      }
#pragma unroll
      for (int i = 0; i < BV / 64; ++i) box(Vs + i * kPanel, &m.V, v0 + 64 * i);
    }
    prefetch_small<NT>(sm, p, c, h);
  }
};

// FOUR (with TMA): four stages where they fit (one warpgroup, no GATE: DeltaNet at V-slices of 64),
// the stages' small parts apart and O staged in the step's own q tile (dead once Hᵀ Qᵀ is done; the
// tile is refilled one step later, after the TMA store has read it), else as without it.
template <int K, int V, int BV, bool GATE, bool FOUR = false>
struct RegPassLayout {
  using S4 = RegStage<K, BV, GATE, true>;
  static constexpr int kWarpgroups = BV / 64, kThreadsA = 128 * kWarpgroups;
  static constexpr bool kFour = FOUR && kWarpgroups == 1 && 1024 + 4 * (S4::bytes + S4::small_bytes) + 256 <= 227 * 1024;
  using S = std::conditional_t<kFour, S4, RegStage<K, BV, GATE>>;
  static constexpr size_t o_tile = size_t(kChunk) * 64 * 2;  // a warpgroup's Oᵀ staging, bf16 [C][64]
  static constexpr int stages = kFour ? 4 : (227 * 1024 - 2048 - kWarpgroups * o_tile) / S::bytes >= 3 ? 3 : 2;
  static constexpr size_t Sm = stages * S::bytes;                      // kFour: the small parts
  static constexpr size_t Ot = Sm + stages * S::small_bytes;           // (not kFour)
  static constexpr size_t total = 1024 + Ot + (kFour ? 0 : kWarpgroups * o_tile);
  static_assert(K == 128 && BV % 64 == 0 && V % BV == 0, "K = 128, whole 64-column slices of V a warpgroup");
  static_assert(total + 1024 <= 228 * 1024, "the register pass's shared memory no longer fits an SM");
};

// One step of the register pass on this warpgroup's 64 columns of V, from a stage's swizzled tiles:
// T (𝒯, or 𝒯 Diag(β)) and P [C][C], Kb and Qh [C][K], Vs (v's columns vcol0 .. vcol0 + 63 among
// its panels). Hᵀ is updated in place and Oᵀ (unscaled) left in accO. rb: the rows' β where
// row_betas (else 1: β is in T). GATE: GDN's row gates (e^{G_i}, then e^{γ−G_i}) and e^γ.
// phase_cycles: marks 1 and 2.
// state_fwd_reg_kernel's step and the one-kernel forward's consumers (fwd_fused.cuh).
template <int K, bool GATE>
__device__ __forceinline__ void reg_pass_step(float (&Hacc)[64], float (&accO)[32], const bf16_t* T, const bf16_t* Kb,
                                              const bf16_t* Qh, const bf16_t* P, const bf16_t* Vs, int vcol0,
                                              bool row_betas, const float* rb, const float* row_gates, const float* gam,
                                              unsigned long long* phase_cycles) {
  using wg::Major;
  const int q4 = threadIdx.x & 3;
  uint32_t aH[8][4];
  wg::frag_to_a<128>(Hacc, aH);
  float accD[32];
  wg::gemm_reg_a_issue<64, K, Major::K>(accD, aH, Kb, false);  // Hᵀ Kᵀ
  wg::commit();
  wg::gemm_reg_a_issue<64, K, Major::K>(accO, aH, Qh, false);  // Hᵀ Qᵀ
  wg::commit();
  wg::wait<1>();
  wg::fence_accumulator(accD);
  phase_mark(phase_cycles, 1);
  // D'ᵀ = (Vᵀ − Hᵀ Kᵀ Diag(e^G)) Diag(β): column c of the fragment is the chunk's row c.
  {  // V's fragment transposed by ldmatrix.trans: an x4 gives n8 tiles jj, jj + 1 at both row halves
    const int lane = threadIdx.x & 31, m = lane >> 3, vrow = vcol0 + 16 * ((threadIdx.x >> 5) & 3) + 8 * (m & 1);
#pragma unroll
    for (int jj = 0; jj < 8; jj += 2) {
      uint32_t vv[4];
      ldsm_x4_trans(vv, Vs + wg::tile_offset<kChunk>(8 * (jj + (m >> 1)) + (lane & 7), vrow));
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const int j2 = jj + (x >> 1), hh = x & 1;
        const float2 vf = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&vv[x]));
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int c = 8 * j2 + 2 * q4 + e;
          const float b = row_betas ? rb[c] : 1.f, g = GATE ? row_gates[c] : 1.f;
          float& x_ = accD[4 * j2 + 2 * hh + e];
          x_ = b * ((e ? vf.y : vf.x) - g * x_);
        }
      }
    }
  }
  uint32_t aD[4][4];
  wg::frag_to_a<64>(accD, aD);
  float accE[32];
  wg::gemm_reg_a_issue<64, kChunk, Major::K>(accE, aD, T, false);  // Eᵀ = D'ᵀ 𝒯ᵀ
  wg::commit();
  wg::wait<0>();
  wg::fence_accumulator(accE);
  wg::fence_accumulator(accO);
  phase_mark(phase_cycles, 2);
  uint32_t aE[4][4];
  wg::frag_to_a<64>(accE, aE);
  if constexpr (GATE) {
    wg::frag_for_each<64>(accO, [&](int, int c, float& x) { x *= row_gates[c]; });  // Q̂ H = e^G ⊙ (Q H)
    wg::gemm_reg_a_issue<64, kChunk, Major::K>(accO, aE, P, true);                 // Oᵀ += Eᵀ Pᵀ
    wg::commit();
    wg::frag_for_each<128>(Hacc, [&](int, int d, float& x) { x *= gam[d]; });      // e^γ ⊙ H
    wg::frag_for_each<64>(accE, [&](int, int c, float& x) { x *= row_gates[kChunk + c]; });
    uint32_t aEd[4][4];  // (e^{γ−G} ⊙ E)ᵀ
    wg::frag_to_a<64>(accE, aEd);
    wg::gemm_reg_a_issue<128, kChunk, Major::MN>(Hacc, aEd, Kb, true);  // Hᵀ += (e^{γ−G} ⊙ E)ᵀ K
  } else {
    wg::gemm_reg_a_issue<128, kChunk, Major::MN>(Hacc, aE, Kb, true);  // Hᵀ += Eᵀ K
    wg::gemm_reg_a_issue<64, kChunk, Major::K>(accO, aE, P, true);     // Oᵀ += Eᵀ Pᵀ
  }
  wg::commit();
  wg::wait<0>();
  wg::fence_accumulator(Hacc);
  wg::fence_accumulator(accO);
}

// O's rows (tokens) of this warpgroup's 64 columns from Oᵀ: transposed (times the scale) into the
// staging tile Ot [C][64], then out by a TMA store of the whole chunk (by_box; thread 0 of the
// warpgroup issues it) or in 16-byte row pieces. barrier: the warpgroup's named barrier.
template <int V>
__device__ __forceinline__ void reg_pass_store_o(const float (&accO)[32], bf16_t* Ot, const DeltaParams& p,
                                                 const tma::RegMaps& maps, ChunkSpan sp, int h, int v0, bool by_box,
                                                 int barrier) {
  wg::store_transposed<64>(accO, Ot, 0, p.scale);
  if (by_box) wg::fence_smem_writes();  // the staging tile, for the TMA store's async proxy
  warpgroup_sync(barrier);
  if (by_box) {
    if ((threadIdx.x & 127) == 0) tma::store_box(&maps.O, v0, h, sp.tok0, Ot);
  } else {
    store_sw128_rows(p.o + (int64_t(sp.tok0) * p.H + h) * V + v0, int64_t(p.H) * V, Ot, sp.len);
  }
}

// BESIDE: wy_prep runs beside as this grid's programmatic dependent (Config::prep_beside), its
// per-chunk flags acquired as state_fwd_body's chunk_range_loop does.
// TMA (maps unread without it): the stage's tiles by TMA boxes and O's whole chunks by a TMA store
// from the staging tile (launch_state_fwd_reg says where).
template <int VAR, int K, int V, int BV, bool BESIDE, bool TMA = false, bool FOUR = false>
__global__ void __launch_bounds__(RegPassLayout<K, V, BV, VAR == kGDN, FOUR>::kThreadsA, 1)
    state_fwd_reg_kernel(const DeltaParams p, const __grid_constant__ tma::RegMaps maps) {
  static_assert(VAR == kDeltaNet || VAR == kGDN, "the register pass: DeltaNet's and GDN's fused forward");
  constexpr bool kGate = VAR == kGDN;
  using L = RegPassLayout<K, V, BV, kGate, FOUR>;
  using S = typename L::S;
  static_assert(!FOUR || TMA, "four stages: with TMA (O by the store that reads the q tile before its refill)");
  constexpr int NT = L::kThreadsA, NS = L::stages;
  if (!on_path(p.path_flag, p.path_value)) return;
  extern __shared__ __align__(16) char raw[];
  char* const smem = align_1024(raw);
  const int n = blockIdx.x / (V / BV), h = blockIdx.y, cta_v0 = (blockIdx.x % (V / BV)) * BV;
  const int wgi = threadIdx.x >> 7, v0 = cta_v0 + 64 * wgi;  // this warpgroup's 64 columns of V
  bf16_t* const Ot_apart = reinterpret_cast<bf16_t*>(smem + L::Ot + wgi * L::o_tile);  // (not L::kFour)
  if constexpr (BESIDE) pdl_launch_dependents();
  __shared__ uint64_t full[NS];  // TMA: stage i % NS's boxes landed (one arrival a use)
  if constexpr (TMA) {
    if (threadIdx.x == 0) {
      for (int i = 0; i < NS; ++i) tma::mbar_init(&full[i], 1);
      tma::fence_barrier_init();
    }
    __syncthreads();
  }
  auto small = [&](int i) { return L::kFour ? smem + L::Sm + (i % NS) * S::small_bytes : smem + (i % NS) * S::bytes; };
  auto prefetch = [&](char* st, int c, ChunkSpan sp, int i) {
    if constexpr (TMA) S::template prefetch_tma<NT>(st, small(i), p, maps, c, sp, h, cta_v0, V, &full[i % NS], BESIDE);
    else S::template prefetch<NT>(st, small(i), p, c, sp, h, cta_v0, V);
  };

  // Hᵀ: rows v0 .. v0 + 63 of V, all K columns (element (r, d) is H[d][v0 + r]).
  const int64_t state_at = (int64_t(n) * p.H + h) * K * V + v0;
  float Hacc[64];
  wg::frag_for_each<128>(Hacc, [&](int r, int d, float& x) { x = p.h0 ? p.h0[state_at + int64_t(d) * V + r] : 0.f; });

  const int c_begin = p.seq_chunk[n], count = p.seq_chunk[n + 1] - c_begin;
  auto span = [&](int i) { return i < count ? ChunkSpan{p.chunk_tok[c_begin + i], p.chunk_len[c_begin + i]} : ChunkSpan{0, 0}; };
  auto stage = [&](int i) { return smem + (i % NS) * S::bytes; };
  [[maybe_unused]] unsigned long long t_start = 0;  // BESIDE: REWY_BESIDE_CLOCK's
  if constexpr (BESIDE) {
    if (threadIdx.x == 0) {
      t_start = beside_pass_start(p);
      for (int i = 0; i < NS && i < count; ++i) wait_prep_flag(p, c_begin + i, h);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < NS - 1; ++i) {
    if (i < count) prefetch(stage(i), c_begin + i, span(i), i);
    cp_async_commit();
  }
  ChunkSpan ahead = span(NS - 1);
  phase_start(p.phase_cycles);
  for (int i = 0; i < count; ++i) {
    cp_async_wait<NS - 2>();  // this thread's copies of chunk i
    if constexpr (TMA) tma::mbar_wait(&full[i % NS], (i / NS) & 1);  // ... and its boxes
    if constexpr (BESIDE) phase_mark(p.phase_cycles, kRegPassDataPhase);
    if constexpr (TMA)
      if ((threadIdx.x & 127) == 0) tma::store_read_wait();  // the last O store has read the staging tile
    wg::fence_smem_writes();  // ... for wgmma's async proxy
    __syncthreads();          // every thread's; and every warpgroup is done with stage i − 1 and its Oᵀ tile
    const int j = i + NS - 1;
    if (j < count) prefetch(stage(j), c_begin + j, ahead, j);
    ahead = span(j + 1);  // for the next step's prefetch: its latency hides behind this step
    cp_async_commit();
    phase_mark(p.phase_cycles, 0);
    char* const st = stage(i);
    const bf16_t* const T = reinterpret_cast<const bf16_t*>(st + S::T);
    const bf16_t* const Kb = reinterpret_cast<const bf16_t*>(st + S::Kb);
    const bf16_t* const Qh = reinterpret_cast<const bf16_t*>(st + S::Qh);
    const bf16_t* const P = reinterpret_cast<const bf16_t*>(st + S::P);
    const bf16_t* const Vs = reinterpret_cast<const bf16_t*>(st + S::Vs);
    char* const sm = small(i);
    const float* const rb = reinterpret_cast<const float*>(sm + S::rbeta);
    const float* const gam = reinterpret_cast<const float*>(sm + S::gam);      // GATE
    const float* const row_gates = reinterpret_cast<const float*>(sm + S::rows);  // GATE: e^{G_i}, then e^{γ−G_i}
    const ChunkSpan sp = *reinterpret_cast<const ChunkSpan*>(sm + S::span);
    bf16_t* const Ot = L::kFour ? reinterpret_cast<bf16_t*>(st + S::Qh) : Ot_apart;

    float accO[32];
    reg_pass_step<K, kGate>(Hacc, accO, T, Kb, Qh, P, Vs, 64 * wgi, p.row_betas != nullptr, rb, row_gates, gam,
                            p.phase_cycles);
    // O's rows (tokens) from Oᵀ: transposed into the staging tile, then 16-byte row pieces.
    reg_pass_store_o<V>(accO, Ot, p, maps, sp, h, v0, TMA && sp.len == kChunk, 1 + wgi);
    if constexpr (BESIDE)
      if (threadIdx.x == 0) prep_fence_point<NS>(p, i, c_begin, count, h);
    phase_mark(p.phase_cycles, 3);
  }
  cp_async_wait<0>();
  if constexpr (TMA)
    if ((threadIdx.x & 127) == 0) tma::store_wait();
  if constexpr (BESIDE)
    if (threadIdx.x == 0) beside_pass_end(p, t_start, count);
  if (p.ht) wg::frag_for_each<128>(Hacc, [&](int r, int d, float& x) { p.ht[state_at + int64_t(d) * V + r] = x; });
}

}  // namespace rewy::delta::cuda_impl
