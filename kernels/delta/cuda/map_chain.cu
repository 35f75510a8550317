// The forward state pass as a chain of chunk maps (map_chain.h): kernel and host launcher.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/check.h"
#include "engine/cuda/check_cuda.h"
#include "kernels/delta/cuda/chunk_fwd.cuh"
#include "kernels/delta/cuda/chunk_table.h"
#include "kernels/delta/cuda/map_chain.h"

namespace rewy::delta::cuda_impl {
namespace {

struct MapChainParams {
  int H = 0;
  const int* seq_chunk = nullptr;  // [N + 1] first chunk of each sequence
  const int* chunk_tok = nullptr;  // [chunks] first token
  const int* chunk_len = nullptr;  // [chunks] valid rows (1..C)
  const bf16_t *M = nullptr, *B = nullptr, *Qp = nullptr, *N = nullptr;
  const float* gexp = nullptr;
  const float* h0 = nullptr;
  bf16_t* o = nullptr;
  float* ht = nullptr;
  float scale = 1.f;
};

// One pipeline stage: chunk c's maps. M as K / 64 tiles of [64][K] (the state rows of one
// warpgroup each, wgmma A operands), Q' [C][K] (the output's A operand): swizzled, 1 KB aligned.
// The V-slice's B [K][BV] and N [C][BV] rows padded to BVP (fragment loads by ldmatrix), e^γ.
template <int K, int BV>
struct MapStage {
  static constexpr int BVP = BV + 8;
  static constexpr size_t M = 0;                                        // bf16 K/64 × [64][K]
  static constexpr size_t Qp = M + size_t(K) * K * 2;                   // bf16 [C][K]
  static constexpr size_t B = Qp + size_t(kChunk) * K * 2;              // bf16 [K][BVP]
  static constexpr size_t N = B + align16(size_t(K) * BVP * 2);         // bf16 [C][BVP]
  static constexpr size_t gam = N + align16(size_t(kChunk) * BVP * 2);  // f32 [K]
  static constexpr size_t span = gam + K * 4;                           // ChunkSpan
  static constexpr size_t bytes = (span + 16 + 1023) / 1024 * 1024;

  __device__ static void prefetch(char* st, const MapChainParams& p, int c, ChunkSpan sp, int h, int v0, int V) {
    const int tok0 = sp.tok0, len = sp.len;
    if (threadIdx.x == 0) *reinterpret_cast<ChunkSpan*>(st + span) = sp;
    auto bf = [&](size_t off) { return reinterpret_cast<bf16_t*>(st + off); };
    const int64_t map = int64_t(c) * p.H + h;
#pragma unroll
    for (int w = 0; w < K / 64; ++w)
      async_tile_sw128<64, K>(bf(M) + w * 64 * K, p.M + (map * K + 64 * w) * K, K, 64);
    async_tile_sw128<kChunk, K>(bf(Qp), p.Qp + (int64_t(tok0) * p.H + h) * K, int64_t(p.H) * K, len);
    async_tile<K, BV * 2>(st + B, BVP * 2, p.B + map * K * V + v0, int64_t(V) * 2, K);
    async_tile<kChunk, BV * 2>(st + N, BVP * 2, p.N + (int64_t(tok0) * p.H + h) * V + v0, int64_t(p.H) * V * 2, len);
    async_tile<1, K * 4>(st + gam, 0, p.gexp + map * K, 0, 1);
  }
};

template <int K, int V, int BV>
struct MapChainLayout {
  using S = MapStage<K, BV>;
  static constexpr size_t ht_bytes = size_t(BV) * K * 2;  // one Hᵀ buffer, bf16 [BV][K] swizzled
  static constexpr int stages = (227 * 1024 - 1024 - 2 * ht_bytes) / S::bytes >= 3 ? 3 : 2;
  static constexpr size_t Ht = stages * S::bytes;
  static constexpr size_t total = 1024 + Ht + 2 * ht_bytes;
  static_assert(total <= 227 * 1024, "map_chain's shared memory exceeds 227 KB");
};

// One CTA per (sequence, head, V-slice): warpgroup w holds state rows [64 w, 64 w + 64) (w < K /
// 64) in fp32 registers. A step reads Hᵀ (bf16, written at the end of the step before), runs the
// warpgroup's product −M_w Hᵀ and (warpgroup 1) the output's Q' Hᵀ in one wgmma group, then
// H ← e^γ ⊙ H − M H + B, Hᵀ into the other buffer, O = s (Q' H + N) to global memory, and one
// block barrier. Hᵀ is double-buffered: warpgroup 0 may write its next rows while warpgroup 1's
// products still read the current ones; the next stage lands behind the same barrier.
template <int K, int V, int BV>
__global__ void __launch_bounds__(kThreads, 1) map_chain_kernel(const MapChainParams p) {
  using L = MapChainLayout<K, V, BV>;
  using S = typename L::S;
  using wg::Major;
  static_assert(kThreads == 256 && (K == 64 || K == 128) && BV % 16 == 0, "two warpgroups, 64-row state blocks");
  extern __shared__ __align__(16) char raw[];
  char* const smem = align_1024(raw);
  bf16_t* const Ht0 = reinterpret_cast<bf16_t*>(smem + L::Ht);
  const WgStateBlock<K, V, BV> blk(p.H);
  const int n = blk.n, h = blk.h, v0 = blk.v0, wgi = blk.wgi, srow0 = blk.srow0;
  const bool holds_state = blk.holds_state;
  const int64_t strideV = int64_t(p.H) * V;

  float Hacc[BV / 2];  // rows [srow0, +64) of the K×BV state slice, fp32
  blk.load_state(Hacc, p.h0);
  if (holds_state) wg::store_transposed<BV>(Hacc, Ht0, srow0);

  const int c_begin = p.seq_chunk[n], count = p.seq_chunk[n + 1] - c_begin;
  constexpr int NS = L::stages;
  auto span = [&](int i) { return i < count ? ChunkSpan{p.chunk_tok[c_begin + i], p.chunk_len[c_begin + i]} : ChunkSpan{0, 0}; };
  auto stage = [&](int i) { return smem + (i % NS) * S::bytes; };
#pragma unroll
  for (int i = 0; i < NS - 1; ++i) {
    if (i < count) S::prefetch(stage(i), p, c_begin + i, span(i), h, v0, V);
    cp_async_commit();
  }
  ChunkSpan ahead = span(NS - 1);
  // Each step ends with the next stage landed: its copies, Hᵀ, behind one fence and one barrier.
  auto next_stage_landed = [&] {
    cp_async_wait<NS - 2>();
    wg::fence_smem_writes();  // this thread's copies and Hᵀ stores, for wgmma's async proxy
    __syncthreads();
  };
  next_stage_landed();  // stage 0, Hᵀ of the entering state, the prologue's spans
  for (int i = 0; i < count; ++i) {
    const int j = i + NS - 1;  // into the stage step i − 1 read
    if (j < count) S::prefetch(stage(j), p, c_begin + j, ahead, h, v0, V);
    ahead = span(j + 1);
    cp_async_commit();
    char* const st = stage(i);
    const bf16_t* const M = reinterpret_cast<const bf16_t*>(st + S::M);
    const bf16_t* const Qp = reinterpret_cast<const bf16_t*>(st + S::Qp);
    const bf16_t* const Bs = reinterpret_cast<const bf16_t*>(st + S::B);
    const bf16_t* const Ns = reinterpret_cast<const bf16_t*>(st + S::N);
    const float* const gam = reinterpret_cast<const float*>(st + S::gam);
    const ChunkSpan sp = *reinterpret_cast<const ChunkSpan*>(st + S::span);
    const bf16_t* const Hcur = Ht0 + (i & 1) * (L::ht_bytes / 2);
    bf16_t* const Hnext = Ht0 + ((i + 1) & 1) * (L::ht_bytes / 2);

    float accU[BV / 2], accO[BV / 2];
    // (Each warpgroup's wgmma inside its own branch with its wait: ptxas serializes wgmma issued
    // across warpgroup-dependent branches, C7520.)
    if (wgi == 1) {
      if constexpr (K == 128) wg::gemm_issue<BV, K, Major::K, Major::K>(accU, M + 64 * K, Hcur, false);
      wg::gemm_issue<BV, K, Major::K, Major::K>(accO, Qp, Hcur, false);
      wg::commit();
      wg::wait<0>();
    } else {
      wg::gemm_issue<BV, K, Major::K, Major::K>(accU, M, Hcur, false);
      wg::commit();
      wg::wait<0>();
    }
    if (holds_state) {  // H ← e^γ ⊙ H − M H + B
      uint32_t b[BV / 4];
      wg::load_rows_packed<BV, S::BVP>(b, Bs + srow0 * S::BVP);
      wg::frag_for_each<BV>(Hacc, [&](int r, int, float& x) { x *= gam[srow0 + r]; });
#pragma unroll
      for (int q = 0; q < BV / 4; ++q) {
        const float2 bf = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&b[q]));
        Hacc[2 * q] += bf.x - accU[2 * q];
        Hacc[2 * q + 1] += bf.y - accU[2 * q + 1];
      }
      wg::store_transposed<BV>(Hacc, Hnext, srow0);
    }
    if (wgi == 1) {  // O = s (Q' H + N)
      uint32_t nv[BV / 4];
      wg::load_rows_packed<BV, S::BVP>(nv, Ns);
#pragma unroll
      for (int q = 0; q < BV / 4; ++q) {
        const float2 nf = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&nv[q]));
        accO[2 * q] += nf.x;
        accO[2 * q + 1] += nf.y;
      }
      wg_store_rows<BV>(accO, p.o + (int64_t(sp.tok0) * p.H + h) * V + v0, strideV, sp.len, p.scale);
    }
    next_stage_landed();  // and this stage and the current Hᵀ are free
  }
  cp_async_wait<0>();
  if (holds_state && p.ht)
    wg::frag_for_each<BV>(Hacc, [&](int r, int cc, float& x) { p.ht[blk.state_at + int64_t(r) * V + cc] = x; });
}

template <int K, int V, int BV>
void launch(const MapChainParams& p, int num_seqs, cudaStream_t s) {
  constexpr size_t kSmem = MapChainLayout<K, V, BV>::total;
  static const bool once = [] {
    CUDA_CHECK(cudaFuncSetAttribute(map_chain_kernel<K, V, BV>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem)));
    return true;
  }();
  (void)once;
  map_chain_kernel<K, V, BV><<<dim3(num_seqs * (V / BV), p.H), kThreads, kSmem, s>>>(p);
  CUDA_CHECK_LAUNCH();
}

template <int K, int V>
void launch_bv(int bv, const MapChainParams& p, int num_seqs, cudaStream_t s) {
  if (bv == 16) return launch<K, V, 16>(p, num_seqs, s);
  if (bv == 32) return launch<K, V, 32>(p, num_seqs, s);
  if (bv == 64) return launch<K, V, 64>(p, num_seqs, s);
  REWY_FAIL("map_chain_forward: V-slice must be 16, 32 or 64, got {}", bv);
}

template <class T> T* data(const Tensor& t) { return t.defined() ? static_cast<T*>(t.data_ptr()) : nullptr; }

}  // namespace

void map_chain_forward(const MapChainArgs& a, const Stream& s) {
  REWY_CHECK(a.Qp.defined() && a.Qp.dim() == 3 && a.N.defined() && a.N.dim() == 3,
             "map_chain_forward: Qp and N must be [tokens][H][D]");
  const int64_t tokens = a.Qp.size(0), H = a.Qp.size(1), K = a.Qp.size(2), V = a.N.size(2);
  const std::vector<int64_t>& ss = a.seq_start;
  REWY_CHECK(ss.size() >= 2 && ss.front() == 0 && ss.back() == tokens && std::is_sorted(ss.begin(), ss.end()),
             "map_chain_forward: seq_start must rise from 0 to Qp's {} tokens in N + 1 offsets", tokens);
  Dims dims;
  dims.N = int64_t(ss.size()) - 1;
  dims.seq_start = ss;
  const ChunkTable ct = make_chunk_table(dims, a.Qp.device(), s);
  const int64_t chunks = ct.num_chunks, seqs = dims.N;
  auto need = [&](const Tensor& t, const Shape& shape, DType dt, const char* name) {
    REWY_CHECK(t.defined() && t.shape() == shape && t.dtype() == dt && t.is_contiguous() && t.device().is_cuda(),
               "map_chain_forward: {} must be contiguous {} {} on CUDA, got {}", name, dtype_name(dt), shape_str(shape),
               t.defined() ? t.str() : std::string("undefined"));
  };
  need(a.M, {chunks, H, K, K}, DType::BF16, "M");
  need(a.B, {chunks, H, K, V}, DType::BF16, "B");
  need(a.N, {tokens, H, V}, DType::BF16, "N");
  need(a.gexp, {chunks, H, K}, DType::F32, "gexp");
  need(a.o, {tokens, H, V}, DType::BF16, "o");
  if (a.h0.defined()) need(a.h0, {seqs, H, K, V}, DType::F32, "h0");
  if (a.ht.defined()) need(a.ht, {seqs, H, K, V}, DType::F32, "ht");
  REWY_CHECK((K == 64 || K == 128) && (V == 64 || V == 128), "map_chain_forward: K, V in {{64, 128}}, got {}, {}", K, V);
  if (chunks == 0) return;
  MapChainParams p;
  p.H = int(H);
  p.seq_chunk = data<const int>(ct.seq_chunk);
  p.chunk_tok = data<const int>(ct.chunk_tok);
  p.chunk_len = data<const int>(ct.chunk_len);
  p.M = data<const bf16_t>(a.M);
  p.B = data<const bf16_t>(a.B);
  p.Qp = data<const bf16_t>(a.Qp);
  p.N = data<const bf16_t>(a.N);
  p.gexp = data<const float>(a.gexp);
  p.h0 = data<const float>(a.h0);
  p.o = data<bf16_t>(a.o);
  p.ht = data<float>(a.ht);
  p.scale = a.scale;
  const int bv = std::min<int>(a.bv, int(V));
  const auto st = static_cast<cudaStream_t>(s.handle);
  if (K == 64 && V == 64) launch_bv<64, 64>(bv, p, int(seqs), st);
  else if (K == 64) launch_bv<64, 128>(bv, p, int(seqs), st);
  else if (V == 64) launch_bv<128, 64>(bv, p, int(seqs), st);
  else launch_bv<128, 128>(bv, p, int(seqs), st);
}

}  // namespace rewy::delta::cuda_impl
