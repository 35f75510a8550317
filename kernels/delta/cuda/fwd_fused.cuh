// DeltaNet's and GDN's Recompute forward in one kernel: the register pass's step on consumer
// warpgroups beside a producer warpgroup that stages each chunk's operands, one CTA per (sequence,
// head) (two at V-slices of 64). Two forms:
//
// PFORM (DeltaNet's default where more than 64 V-slices of 64 run: delta_cuda.cu's forward;
// experiment ffwdp everywhere, GDN's too): wy_prep's 𝒯-only kernel first (kPrepTOnlyExp: k and β
// in, 𝒯 and the rows' β out; GDN's row gates and e^γ too, for the backward), then here
//   warpgroup 0 (producer): TMA loads of k, q, v and 𝒯 into one slot, three chunks deep; for chunk
//     j, P = tril(Q Kᵀ) by one wgmma from the staged q and k into the same slot, the rows' β beside
//     it, then P out for the backward; one to two chunks ahead of
//     GDN: the producer also reads the chunk's 64 log-decays and scans them as wy_prep does
//     (warp_pair_cumsum: the same G bit for bit), scales P by e^{G_r − G_c} as wy_prep's P, and
//     stages e^{G_i}, e^{γ−G_i} and e^γ beside β for the consumers' gated step (state_fwd_reg.cuh).
//   warpgroups 1-2, or 1 (consumers): the register pass's step (state_fwd_reg.cuh) on 64 columns of
//     V each, O staged in the warpgroup's own (dead) panel of the v tile and stored by TMA.
// At K = V = 128 the prep moves 24 KB a chunk (wy_prep_fused4: 48) and the kernel 80 (the pass:
// 80, reading P where this writes it). Measured (H100, 2026-12-06, docs/measurements/2026-12-06-s65/
// call1/): Recompute forward 1.12-1.13x at (8, 2048, 16) and (8, 4096, 32), 1.08x at (4, 4096, 16)
// against wy_prep and the register pass; at shape 0 the prep 71.8 us (fused4 95.5), this kernel
// 130.6 (the pass 131.9). The producer waits (5.9k cycles a chunk, 3.0k of them for data and for
// the consumers' release); the consumers' step is the pass's, bound by the DRAM's rate.
//
// The solve form (experiment ffwd): no prep kernel; the producer (88 registers) also forms
// A = stril(Diag(β) K Kᵀ), 𝒯 = (I + A)⁻¹ by wy_prep's solve (solve_unit_lower, fp32), and puts 𝒯
// (or 𝒯 Diag(β)) and P as bf16 into a two-deep ring beside β (and out for the backward); the
// consumers take 208 registers. P, 𝒯 and β never leave the SM on the way to the pass: about 80 KB
// a chunk against the split form's 128.5. Measured (H100, 2026-12-06,
// docs/measurements/2026-12-06-s64/call4/): correct and slower, 0.668x at (8, 2048, 16), 0.34x at
// (4, 4096, 16) (64 CTAs), 0.66-0.71x at (8, 4096, 32): the producer is the chain, 17.5k cycles a
// chunk (wait 10%, P,A 16%, solve 50%, 𝒯 out 16%, load 9%) where a consumer step takes 6.2k; the
// solve alone (8.7k) is 1.5x wy_prep's 5.7k at four CTAs an SM (its 88 registers spill, and it
// shares the SM's issue slots with the consumers' products).
//
// The rounding points are wy_prep's and the register pass's (P, 𝒯 from fp32 to bf16; H, D', E as
// the products' operands), so the CPU twin and its bars hold. mbarriers order the rings: full
// (k, q, v (and 𝒯) landed), ready (the producer's tiles written), qkv_free and tp_free (every
// consumer warpgroup done with a slot; released at the next step's start, once O's store has
// read it). Named barriers: 1 the producer's (solve_unit_lower's too), 2 + w consumer warpgroup w's.
#pragma once
#include "kernels/delta/cuda/state_fwd_reg.cuh"

namespace rewy::delta::cuda_impl {

// Producer phases for REWY_KERNEL_TIMING=2 (thread 0's view, summed over the chunks).
inline constexpr const char* kFusedFwdPhases[] = {"wait data", "P,A", "solve", "T out", "load next"};
inline constexpr const char* kFusedFwdPPhases[] = {"wait data", "P", "P out", "load next"};  // PFORM's

// BV: the V-slice a CTA takes, 128 (two consumer warpgroups) or 64 (PFORM alone: one, two CTAs a
// (sequence, head), so that 64 pairs fill 128 SMs).
// VAR: DeltaNet, or GDN (PFORM alone: its producer also scans the chunk's gates, scales P by
// e^{G_r − G_c} and stages the consumers' row gates and e^γ).
template <int VAR, int K, int V, bool PFORM = false, int BV = 128>
struct FusedFwdLayout {
  static constexpr bool kGate = VAR == kGDN;
  static_assert(VAR == kDeltaNet || (kGate && PFORM), "DeltaNet, or GDN by the P-forming producer's kernel");
  static_assert(BV == 128 || (PFORM && BV == 64), "V-slices of 64: the P-forming producer's kernel");
  static constexpr int kConsumers = BV / 64, kThreads = 128 * (1 + kConsumers), kQkvSlots = 3;
  static constexpr int kTpSlots = PFORM ? 0 : 2, kLd = kLdA;  // kLd: the solve's fp32 row pitch
  // ready's ring: the prep's slots, or (PFORM) the k, q, v slots, which hold 𝒯 and P too.
  static constexpr int kReadySlots = PFORM ? kQkvSlots : kTpSlots;
  // setmaxnreg moves registers inside the CTA's pool, what the launch gave it: 384 threads at the
  // 168 of __launch_bounds__(384, 1), 128 · 504. (80 and 216, which sum to the SM's 65536, hung:
  // the consumers' increase waited for registers the pool never had.) At 208 the consumers' step
  // compiles without spills (ptxas, 2026-12-06); the producer spills some 140 instructions' worth.
  // One consumer (BV = 64): no setmaxnreg, the launch's registers (255 at most) serve both.
  static constexpr int kProducerRegs = 88, kConsumerRegs = 208;
  static_assert(kProducerRegs + 2 * kConsumerRegs <= 3 * 168, "the CTA's register pool at launch");
  static_assert(K == 128 && V == 128, "K = V = 128: consumer warpgroups of 64 columns");
  // A k, q, v slot: swizzled K-major tiles [C][K], [C][K], [C][V] (1024-byte aligned panels);
  // PFORM: 𝒯 (Diag(β)) [C][C] by TMA with them, and P [C][C] from the producer.
  static constexpr size_t Kt = 0, Qt = Kt + size_t(kChunk) * K * 2, Vt = Qt + size_t(kChunk) * K * 2;
  static constexpr size_t SlotT = Vt + size_t(kChunk) * BV * 2, SlotP = SlotT + size_t(kChunk) * kChunk * 2;
  static constexpr size_t qkv_bytes = PFORM ? SlotP + size_t(kChunk) * kChunk * 2 : SlotT;
  // A prep slot: 𝒯 (Diag(β)) [C][C] and P [C][C], swizzled.
  static constexpr size_t Tt = 0, Pt = size_t(kChunk) * kChunk * 2, tp_bytes = 2 * Pt;
  static constexpr size_t qkv = 0, tp = qkv + kQkvSlots * qkv_bytes;
  static constexpr size_t As = tp + kTpSlots * tp_bytes;                                 // f32 [C][kLd]
  static constexpr size_t Ts = As + (PFORM ? 0 : size_t(kChunk) * kLd * 4);              // f32 [C][kLd]
  // A ready slot's small part: the rows' β [C]; kGate: e^{G_i}, e^{γ−G_i} [2][C] and e^γ [K].
  static constexpr int kSmall = kChunk + (kGate ? 2 * kChunk + K : 0), kRows = kChunk, kGam = 3 * kChunk;
  static constexpr size_t betas = Ts + (PFORM ? 0 : size_t(kChunk) * kLd * 4);           // f32 [kReadySlots][kSmall]
  static constexpr size_t Gs = betas + kReadySlots * kSmall * 4;                         // kGate: f32 [C], the producer's G
  static constexpr size_t total = 1024 + Gs + (kGate ? kChunk * 4 : 0);                  // (1024: the alignment)
  static constexpr uint32_t load_bytes = uint32_t(PFORM ? SlotP : qkv_bytes);            // (what TMA brings)
  static_assert(qkv_bytes % 1024 == 0 && tp_bytes % 1024 == 0 && SlotT % 1024 == 0, "1024-byte aligned tiles");
  static_assert(total <= 227 * 1024, "the fused forward's shared memory exceeds an SM's");
};

__device__ __forceinline__ void producer_sync() { asm volatile("bar.sync 1, 128;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void regs_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N)); }
template <int N>
__device__ __forceinline__ void regs_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N)); }

// PFORM: 𝒯 (and the rows' β) from wy_prep's kernel without q and P (kPrepTOnlyExp), launched
// before this one; the producer brings 𝒯 by TMA with k, q and v, forms P = tril(Q Kᵀ) from the
// staged q and k into the same slot and writes it out for the backward. No solve on the chain.
template <int VAR, int K, int V, bool PFORM = false, int BV = 128>
__global__ void __launch_bounds__(FusedFwdLayout<VAR, K, V, PFORM, BV>::kThreads, 1)
    fwd_fused_kernel(const DeltaParams p, const __grid_constant__ tma::RegMaps maps) {
  using L = FusedFwdLayout<VAR, K, V, PFORM, BV>;
  constexpr int NC = L::kConsumers;
  constexpr bool kGate = L::kGate;
  // GDN's pass reads raw q and k (the rows' gates scale its products); DeltaNet's Q̂ and K̄ are them.
  const bf16_t* const k_in = kGate ? p.k : p.Kg;
  const bf16_t* const q_in = kGate ? p.q : p.Qg;
  using wg::Major;
  constexpr int NQ = L::kQkvSlots, NP = L::kTpSlots, NR = L::kReadySlots, LD = L::kLd;
  extern __shared__ __align__(16) char raw[];
  char* const smem = align_1024(raw);
  __shared__ uint64_t full[NQ], qkv_free[NQ], ready[NR], tp_free[NP > 0 ? NP : 1];
  const int n = blockIdx.x / (V / BV), h = blockIdx.y, cta_v0 = (blockIdx.x % (V / BV)) * BV;
  if (threadIdx.x == 0) {
    for (int i = 0; i < NQ; ++i) tma::mbar_init(&full[i], 1), tma::mbar_init(&qkv_free[i], NC);
    for (int i = 0; i < NR; ++i) tma::mbar_init(&ready[i], 1);
    for (int i = 0; i < NP; ++i) tma::mbar_init(&tp_free[i], 2);
    tma::fence_barrier_init();
  }
  __syncthreads();  // (the last block barrier: the roles part here)

  auto slot = [&](int i) { return smem + L::qkv + (i % NQ) * L::qkv_bytes; };
  auto tile = [&](int i, size_t off) { return reinterpret_cast<bf16_t*>(slot(i) + off); };
  // Chunk i's 𝒯 and P: in its k, q, v slot (PFORM), or in the prep ring.
  auto prep_tile = [&](int i, size_t off) {
    if constexpr (PFORM) return tile(i, off == L::Tt ? L::SlotT : L::SlotP);
    else return reinterpret_cast<bf16_t*>(smem + L::tp + (i % (NP > 0 ? NP : 1)) * L::tp_bytes + off);
  };
  auto betas_of = [&](int i) { return reinterpret_cast<float*>(smem + L::betas) + (i % NR) * L::kSmall; };
  const int c_begin = p.seq_chunk[n], count = p.seq_chunk[n + 1] - c_begin;
  auto span = [&](int i) { return ChunkSpan{p.chunk_tok[c_begin + i], p.chunk_len[c_begin + i]}; };

  // The producer's (threads 0-127). Chunk i's k, q, v (the CTA's V-slice) and, PFORM, 𝒯 into its
  // slot, once every consumer is done with the slot's last chunk: whole chunks by TMA boxes (thread
  // 0), a partial one by every thread's cp.async (a box would bring the next sequence's rows, not
  // zeros), its barrier armed for no bytes.
  const int64_t strideK = int64_t(p.H) * K, strideC = int64_t(p.H) * kChunk;
  auto load = [&](int i) {
    if (i >= count) return;
    if (i >= NQ) tma::mbar_wait(&qkv_free[i % NQ], ((i - NQ) / NQ) & 1);
    const ChunkSpan sp = span(i);
    if (sp.len == kChunk) {
      if (threadIdx.x == 0) {
        tma::mbar_arrive_expect(&full[i % NQ], L::load_bytes);
        constexpr int kPanel = kChunk * 64;
#pragma unroll
        for (int x = 0; x < K / 64; ++x) {
          tma::load_box(tile(i, L::Kt) + x * kPanel, &maps.K, 64 * x, h, sp.tok0, &full[i % NQ]);
          tma::load_box(tile(i, L::Qt) + x * kPanel, &maps.Q, 64 * x, h, sp.tok0, &full[i % NQ]);
        }
#pragma unroll
        for (int x = 0; x < BV / 64; ++x)
          tma::load_box(tile(i, L::Vt) + x * kPanel, &maps.V, cta_v0 + 64 * x, h, sp.tok0, &full[i % NQ]);
        if constexpr (PFORM) tma::load_box(tile(i, L::SlotT), &maps.T, 0, h, sp.tok0, &full[i % NQ]);
      }
    } else {
      const int64_t base = int64_t(sp.tok0) * p.H + h;
      async_tile_sw128<kChunk, K, 128>(tile(i, L::Kt), k_in + base * K, strideK, sp.len);
      async_tile_sw128<kChunk, K, 128>(tile(i, L::Qt), q_in + base * K, strideK, sp.len);
      async_tile_sw128<kChunk, BV, 128>(tile(i, L::Vt), p.v + base * V + cta_v0, int64_t(p.H) * V, sp.len);
      // (𝒯, or 𝒯 Diag(β) without β on the rows; p.Tbeta is p.Tinv with them.)
      if constexpr (PFORM)
        async_tile_sw128<kChunk, kChunk, 128>(tile(i, L::SlotT), p.Tbeta + base * kChunk, strideC, sp.len);
      cp_async_commit();
      if (threadIdx.x == 0) tma::mbar_arrive_expect(&full[i % NQ], 0);
    }
  };
  // The producer's wait for chunk j's slot: a partial chunk's copies (every thread's, fenced for
  // wgmma's async proxy), then the slot's barrier.
  auto wait_loaded = [&](int j, const ChunkSpan& sp) {
    if (sp.len < kChunk) {
      cp_async_wait<0>();
      wg::fence_smem_writes();
      producer_sync();
    }
    tma::mbar_wait(&full[j % NQ], (j / NQ) & 1);
  };

  if constexpr (PFORM) {
    if (threadIdx.x < 128) {
      // ---------------------------------------------------------------- producer (P alone)
      if constexpr (NC == 2) regs_dec<L::kProducerRegs>();
      const int tid = threadIdx.x;
      load(0);
      load(1);
      phase_start(p.phase_cycles);
      for (int j = 0; j < count; ++j) {
        const ChunkSpan sp = span(j);
        const int64_t baseC = (int64_t(sp.tok0) * p.H + h) * kChunk;
        // The rows' β (wy_prep's), ahead of the waits; GDN: the rows' log-decays too (warp 0, two
        // rows a lane, 0 past the chunk's end, as wy_prep's gate_issue reads them).
        const float bt = p.row_betas && tid < kChunk ? row_betas_of(p, c_begin + j, h)[tid] : 0.f;
        float g0 = 0.f, g1 = 0.f;
        if constexpr (kGate)
          if (tid < 32) {
            const int64_t at = int64_t(sp.tok0 + 2 * tid) * p.H + h;
            if (2 * tid < sp.len) g0 = p.g[at];
            if (2 * tid + 1 < sp.len) g1 = p.g[at + p.H];
          }
        wait_loaded(j, sp);
        phase_mark(p.phase_cycles, 0);
        bf16_t* const Pt = tile(j, L::SlotP);
        float acc[32];
        wg::gemm_issue<64, K, Major::K, Major::K>(acc, tile(j, L::Qt), tile(j, L::Kt), false);  // Q Kᵀ
        wg::commit();
        float* const small = betas_of(j);
        if (tid < kChunk) small[tid] = bt;
        [[maybe_unused]] float* const Gs = reinterpret_cast<float*>(smem + L::Gs);
        if constexpr (kGate) {
          // G by wy_prep's scan (gate_scan: the same sums, so P's and 𝒯's gates agree bit for bit),
          // and the consumers' e^{G_i}, e^{γ−G_i} (store_gate_rows) and e^γ (store_gexp_of).
          if (tid < 32) {
            const float2 G = warp_pair_cumsum(g0, g1);
            const float gamma = __shfl_sync(0xffffffffu, G.y, 31);
            Gs[2 * tid] = G.x, Gs[2 * tid + 1] = G.y;
            float* const rows = small + L::kRows;
            rows[2 * tid] = exp_ftz(G.x), rows[2 * tid + 1] = exp_ftz(G.y);
            rows[kChunk + 2 * tid] = exp_ftz(gamma - G.x), rows[kChunk + 2 * tid + 1] = exp_ftz(gamma - G.y);
            const float eg = exp_ftz(gamma);
#pragma unroll
            for (int d = tid; d < K; d += 32) small[L::kGam + d] = eg;
          }
        }
        wg::wait<0>();
        wg::fence_accumulator(acc);
        if constexpr (kGate) {
          producer_sync();  // G
          wg::frag_for_each<64>(acc, [&](int r, int c, float& x) { x = r >= c ? x * exp_ftz(Gs[r] - Gs[c]) : 0.f; });
        } else {
          wg::frag_for_each<64>(acc, [](int r, int c, float& x) { x = r >= c ? x : 0.f; });
        }
        wg::store_rows<64>(acc, Pt, 1.f);  // P = tril(Q Kᵀ) (GDN: ⊙ e^{G_r − G_c})
        wg::fence_smem_writes();  // P's tile, for the consumers' wgmma
        producer_sync();          // P and β (GDN: the gates) written; G read
        if (tid == 0) tma::mbar_arrive(&ready[j % NR]);
        phase_mark(p.phase_cycles, 1);
        if (cta_v0 == 0) store_sw128_rows(p.P + baseC, strideC, Pt, sp.len);  // P's rows out, for the backward
        phase_mark(p.phase_cycles, 2);
        load(j + 2);  // into the slot of chunk j − 1, which the consumers release at step j's start
        phase_mark(p.phase_cycles, 3);
      }
      return;
    }
  } else if (threadIdx.x < 128) {  // (the solve's form; PFORM's producer returned above)
    // ---------------------------------------------------------------- producer
    regs_dec<L::kProducerRegs>();
    const int tid = threadIdx.x;
    float* const As = reinterpret_cast<float*>(smem + L::As);
    float* const Ts = reinterpret_cast<float*>(smem + L::Ts);
    load(0);
    load(1);
    phase_start(p.phase_cycles);
    for (int j = 0; j < count; ++j) {
      const ChunkSpan sp = span(j);
      const int64_t baseC = (int64_t(sp.tok0) * p.H + h) * kChunk;
      const float bt = tid < sp.len ? bf2f(p.beta[int64_t(sp.tok0 + tid) * p.H + h]) : 0.f;  // (ahead of the waits)
      wait_loaded(j, sp);
      if constexpr (NP > 0)
        if (j >= NP) tma::mbar_wait(&tp_free[j % NP], ((j - NP) / NP) & 1);
      phase_mark(p.phase_cycles, 0);
      const bf16_t* const Kb = tile(j, L::Kt);
      bf16_t* const Tt = prep_tile(j, L::Tt);
      bf16_t* const Pt = prep_tile(j, L::Pt);
      float* const rb = betas_of(j);
      float acc[32];
      wg::gemm_issue<64, K, Major::K, Major::K>(acc, tile(j, L::Qt), Kb, false);  // Q Kᵀ
      wg::commit();
      if (tid < kChunk) rb[tid] = bt;
      wg::wait<0>();
      wg::fence_accumulator(acc);
      wg::frag_for_each<64>(acc, [](int r, int c, float& x) { x = r >= c ? x : 0.f; });
      wg::store_rows<64>(acc, Pt, 1.f);  // P = tril(Q Kᵀ)
      wg::gemm_issue<64, K, Major::K, Major::K>(acc, Kb, Kb, false);  // K Kᵀ
      wg::commit();
      wg::wait<0>();
      wg::fence_accumulator(acc);
      producer_sync();  // β of the rows
      wg::frag_for_each<64>(acc, [&](int r, int c, float& x) { As[r * LD + c] = r > c ? rb[r] * x : 0.f; });
      producer_sync();  // A complete, P staged
      phase_mark(p.phase_cycles, 1);
      store_sw128_rows(p.P + baseC, strideC, Pt, sp.len);  // P's rows out
      store_row_betas(p, rb, c_begin + j, h);
      store_gexp_of<kDeltaNet, K>(p, nullptr, c_begin + j, h, tid, 128);  // (e^γ = 1, as wy_prep writes it)
      solve_unit_lower<L::kThreads, 128, LD>(Ts, As, nullptr);
      producer_sync();  // 𝒯 (fp32) complete
      phase_mark(p.phase_cycles, 2);
      // 𝒯 as bf16 into the prep slot and out (p.Tinv) for the backward; without β on the rows,
      // the pass's 𝒯 Diag(β), rounded once from fp32 as wy_prep's store_tbeta8, in both its slot
      // and p.Tbeta.
#pragma unroll
      for (int k = 0; k < kChunk * kChunk / 8 / 128; ++k) {
        const int idx = tid + 128 * k, r = idx >> 3, c0 = 8 * (idx & 7);
        float t[8];
        load8(t, Ts + r * LD + c0);
        if (r < sp.len) store8_global(p.Tinv + baseC + int64_t(r) * strideC + c0, t);
        if (!p.row_betas) {
#pragma unroll
          for (int e = 0; e < 8; ++e) t[e] *= rb[c0 + e];
          if (r < sp.len) store8_global(p.Tbeta + baseC + int64_t(r) * strideC + c0, t);
        }
        store8(Tt + wg::tile_offset<kChunk>(r, c0), t);
      }
      wg::fence_smem_writes();  // P's and 𝒯's tiles, for the consumers' wgmma
      producer_sync();
      if (tid == 0) tma::mbar_arrive(&ready[j % NR]);
      phase_mark(p.phase_cycles, 3);
      load(j + 2);  // into the slot of chunk j − 1, which the consumers release at step j's start
      phase_mark(p.phase_cycles, 4);
    }
    return;
  }

  // ------------------------------------------------------------------ consumers
  if constexpr (NC == 2) regs_inc<L::kConsumerRegs>();
  const int wgi = (threadIdx.x >> 7) - 1, v0 = cta_v0 + 64 * wgi, t = threadIdx.x & 127;
  const int64_t state_at = (int64_t(n) * p.H + h) * K * V + v0;
  float Hacc[64];  // Hᵀ: rows v0 .. v0 + 63 of V, all K columns (element (r, d) is H[d][v0 + r])
  wg::frag_for_each<128>(Hacc, [&](int r, int d, float& x) { x = p.h0 ? p.h0[state_at + int64_t(d) * V + r] : 0.f; });
  for (int i = 0; i < count; ++i) {
    const ChunkSpan sp = span(i);  // (its loads' latency behind the waits)
    tma::mbar_wait(&full[i % NQ], (i / NQ) & 1);
    tma::mbar_wait(&ready[i % NR], (i / NR) & 1);
    if (i > 0 && t == 0) {
      tma::store_read_wait();  // the last O store has read chunk i − 1's v panel
      tma::mbar_arrive(&qkv_free[(i - 1) % NQ]);
      if constexpr (NP > 0) tma::mbar_arrive(&tp_free[(i - 1) % NP]);
    }
    const bf16_t* const Kb = tile(i, L::Kt);
    const bf16_t* const Qh = tile(i, L::Qt);
    bf16_t* const Vs = tile(i, L::Vt);
    const bf16_t* const T = prep_tile(i, L::Tt);
    const bf16_t* const P = prep_tile(i, L::Pt);
    const float* const rb = betas_of(i);
    bf16_t* const Ot = Vs + wgi * kChunk * 64;  // this warpgroup's v panel, dead after D'

    float accO[32];
    reg_pass_step<K, kGate>(Hacc, accO, T, Kb, Qh, P, Vs, 64 * wgi, p.row_betas != nullptr, rb, rb + L::kRows,
                            rb + L::kGam, nullptr);
    reg_pass_store_o<V>(accO, Ot, p, maps, sp, h, v0, sp.len == kChunk, 2 + wgi);
  }
  if (t == 0) tma::store_wait();
  if (p.ht) wg::frag_for_each<128>(Hacc, [&](int r, int d, float& x) { p.ht[state_at + int64_t(d) * V + r] = x; });
}

}  // namespace rewy::delta::cuda_impl
