// Warp-level tensor-core tiles for the delta-rule kernels: bf16 operands in shared memory,
// fp32 accumulators in registers (mma.sync m16n8k16, operands through ldmatrix).
//
// A logical matrix (A: m×k, B: k×n) is stored either RowMajor (as written) or ColMajor (its
// transpose is stored row-major). Rows of a stored tile must start 16-byte aligned: leading
// dimensions are multiples of 8 elements, padded by 8 to keep ldmatrix free of bank conflicts.
//
// Accumulator fragment of one m16n8 tile (lane = 4g + t): acc[0..1] at (row g, cols 2t, 2t+1),
// acc[2..3] at (row g + 8, cols 2t, 2t+1).
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

namespace rewy::delta::cuda_impl {

using bf16_t = __nv_bfloat16;

enum class Lay { RowMajor, ColMajor };

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Two floats as packed bf16 (lo in the low half: a fragment's first column).
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const bf16_t* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

__device__ __forceinline__ void ldsm_x4_trans(uint32_t (&r)[4], const bf16_t* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

__device__ __forceinline__ void ldsm_x2(uint32_t (&r)[2], const bf16_t* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(smem_addr(p)));
}

__device__ __forceinline__ void ldsm_x2_trans(uint32_t (&r)[2], const bf16_t* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_addr(p)));
}

__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// fp32 products on tensor cores to about fp32 accuracy ("3xTF32"): x = big + small with both
// parts tf32 (10-bit mantissa), x·y ≈ big·big' + big·small' + small·big' (the dropped small·small'
// is about 2^-20 of x·y). The blocked inverse of wy_prep takes its 16×16 products this way. Both
// parts are truncated by a mask: cvt.rna.tf32.f32 is a dozen instructions on sm_90 (NaN checks,
// rounding, selects), and it made up most of the inverse's block rows: with the masks those took
// 2.0-2.5k cycles instead of 2.8-3.3k, wy_prep 1.016 (KDA) to 1.051x (DeltaNet) (H200, 2026-11-30,
// shape 0; docs/measurements/2026-11-30-s12/ab_compare_tf32_mask.txt).
__device__ __forceinline__ void split_tf32(float x, uint32_t& big, uint32_t& small) {
  constexpr uint32_t kMask = 0xffffe000u;  // sign, exponent and the 10 high mantissa bits
  big = __float_as_uint(x) & kMask;
  small = __float_as_uint(x - __uint_as_float(big)) & kMask;
}

__device__ __forceinline__ void mma_tf32_1688(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// 16×16×16 products in 3xTF32 whose left operand may be an earlier product's result, still in
// registers. Every fragment takes k in pair order: slot t of a k-step holds k = 2t, slot t + 4
// holds k = 2t + 1. An accumulator's columns 2t, 2t + 1 then sit where an A fragment wants its k
// slots t, t + 4, so a result feeds the next product without a trip through shared memory; the
// B fragments load their rows in the same order. Lane 4g + t.
struct Tf32Left {  // a 16×16 left operand, split: big[k-step][4], small[k-step][4]
  uint32_t big[2][4], small[2][4];
};
struct Tf32Acc {  // a 16×16 result as two n8 tiles: main and the cross terms of each k-step
  float main[2][4], cross[2][2][4];
};

// The left operand from a 16×16 result (value[n8 tile][4], accumulator layout).
__device__ __forceinline__ void tf32_left_from_acc(Tf32Left& a, const float (&value)[2][4]) {
#pragma unroll
  for (int s = 0; s < 2; ++s) {
    const float v[4] = {value[s][0], value[s][2], value[s][1], value[s][3]};
#pragma unroll
    for (int e = 0; e < 4; ++e) split_tf32(v[e], a.big[s][e], a.small[s][e]);
  }
}

// The left operand L[m][k] = base[k * ld + m] (the transpose of a row-major fp32 block).
__device__ __forceinline__ void tf32_left_transposed(Tf32Left& a, const float* base, int ld) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int s = 0; s < 2; ++s) {
    const float* r0 = base + (8 * s + 2 * t) * ld + g;  // k = 8s + 2t; the next row is k + 1
    const float v[4] = {r0[0], r0[8], r0[ld], r0[ld + 8]};
#pragma unroll
    for (int e = 0; e < 4; ++e) split_tf32(v[e], a.big[s][e], a.small[s][e]);
  }
}

// acc = L · R with R[k][n] = base[n * ld + k] (the transpose of a row-major fp32 block).
__device__ __forceinline__ void tf32_mul_transposed(Tf32Acc& acc, const Tf32Left& a, const float* base, int ld) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      acc.main[j][e] = 0.f;
      acc.cross[0][j][e] = acc.cross[1][j][e] = 0.f;
    }
#pragma unroll
  for (int s = 0; s < 2; ++s)
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const float* p = base + (8 * j + g) * ld + 8 * s + 2 * t;
      uint32_t bb[2], bs[2];
      split_tf32(p[0], bb[0], bs[0]);
      split_tf32(p[1], bb[1], bs[1]);
      mma_tf32_1688(acc.cross[s][j], a.small[s], bb[0], bb[1]);
      mma_tf32_1688(acc.cross[s][j], a.big[s], bs[0], bs[1]);
      mma_tf32_1688(acc.main[j], a.big[s], bb[0], bb[1]);
    }
}

// out (+)= alpha · acc (summed).
template <bool ADD>
__device__ __forceinline__ void tf32_fold(float (&out)[2][4], const Tf32Acc& acc, float alpha) {
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float v = alpha * (acc.main[j][e] + (acc.cross[0][j][e] + acc.cross[1][j][e]));
      out[j][e] = ADD ? out[j][e] + v : v;
    }
}

// Generic-proxy writes to shared memory (st.shared, cp.async) become visible to the async proxy
// (wgmma, TMA).
__device__ __forceinline__ void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// A swizzled tile for the fragment loaders: ld = −R (ld > 0 is a row-major tile's leading
// dimension) addresses a 128-byte-swizzled tile of R rows (wgmma.cuh's tile_offset layout, which
// includes this header: the same offset, with the row count at run time), which warpgroup products
// read too; sw_at gives its 16 bytes at (row, col), col a multiple of 8. The row-major addresses
// keep their own expressions (ld is a constant at every call once inlined).
__device__ __forceinline__ const bf16_t* sw_at(const bf16_t* p, int rows, int row, int col) {
  const int cc = col & 63;
  return p + (col >> 6) * rows * 64 + row * 64 + (((cc >> 3) ^ (row & 7)) << 3);
}

// A fragment of the 16×16 block at (m0, k0).
template <Lay L>
__device__ __forceinline__ void load_a_frag(uint32_t (&a)[4], const bf16_t* p, int ld, int m0, int k0) {
  const int lane = threadIdx.x & 31;
  if constexpr (L == Lay::RowMajor) {
    if (ld > 0) ldsm_x4(a, p + (m0 + (lane & 15)) * ld + k0 + (lane >> 4) * 8);
    else ldsm_x4(a, sw_at(p, -ld, m0 + (lane & 15), k0 + (lane >> 4) * 8));
  } else {  // stored [k][m]; matrix q of the x4 covers m-half (q & 1), k-half (q >> 1)
    const int q = lane >> 3, r = lane & 7;
    if (ld > 0) ldsm_x4_trans(a, p + (k0 + (q >> 1) * 8 + r) * ld + m0 + (q & 1) * 8);
    else ldsm_x4_trans(a, sw_at(p, -ld, k0 + (q >> 1) * 8 + r, m0 + (q & 1) * 8));
  }
}

// B fragments of two adjacent n8 tiles at (k0, n0) and (k0, n0 + 8): b[0..1] and b[2..3].
template <Lay L>
__device__ __forceinline__ void load_b_frag2(uint32_t (&b)[4], const bf16_t* p, int ld, int k0, int n0) {
  const int lane = threadIdx.x & 31;
  const int q = lane >> 3, r = lane & 7;  // matrix q: n-tile (q >> 1), k-half (q & 1)
  if constexpr (L == Lay::ColMajor) {     // stored [n][k]
    if (ld > 0) ldsm_x4(b, p + (n0 + (q >> 1) * 8 + r) * ld + k0 + (q & 1) * 8);
    else ldsm_x4(b, sw_at(p, -ld, n0 + (q >> 1) * 8 + r, k0 + (q & 1) * 8));
  } else {  // stored [k][n]
    if (ld > 0) ldsm_x4_trans(b, p + (k0 + (q & 1) * 8 + r) * ld + n0 + (q >> 1) * 8);
    else ldsm_x4_trans(b, sw_at(p, -ld, k0 + (q & 1) * 8 + r, n0 + (q >> 1) * 8));
  }
}

// B fragment of one n8 tile at (k0, n0) (lanes 0-15 address its two k-halves).
template <Lay L>
__device__ __forceinline__ void load_b_frag1(uint32_t (&b)[2], const bf16_t* p, int ld, int k0, int n0) {
  const int lane = threadIdx.x & 31;
  const int q = (lane >> 3) & 1, r = lane & 7;  // matrix q: k-half q
  if constexpr (L == Lay::ColMajor) {
    if (ld > 0) ldsm_x2(b, p + (n0 + r) * ld + k0 + q * 8);
    else ldsm_x2(b, sw_at(p, -ld, n0 + r, k0 + q * 8));
  } else {
    if (ld > 0) ldsm_x2_trans(b, p + (k0 + q * 8 + r) * ld + n0);
    else ldsm_x2_trans(b, sw_at(p, -ld, k0 + q * 8 + r, n0));
  }
}

template <int MT, int NT>
__device__ __forceinline__ void frag_zero(float (&acc)[MT][NT][4]) {
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;
}

// The k-loop of warp_mma (PREFETCH) and the paired products: load(f, k0) fills a Frags with step
// k0's fragments, products(f) issues its mma; k in [k_begin, k_end) by 16. PREFETCH: step k + 16's
// loads before step k's products (two register sets; see warp_mma).
template <class Frags, bool PREFETCH, class Load, class Products>
__device__ __forceinline__ void frag_k_loop(int k_begin, int k_end, Load&& load, Products&& products) {
  if (k_begin >= k_end) return;
  if constexpr (PREFETCH) {
    Frags f0, f1;
    load(f0, k_begin);
#pragma unroll 1
    for (int k0 = k_begin;; k0 += 32) {
      const bool more1 = k0 + 16 < k_end, more2 = k0 + 32 < k_end;
      if (more1) load(f1, k0 + 16);
      products(f0);
      if (!more1) break;
      if (more2) load(f0, k0 + 32);
      products(f1);
      if (!more2) break;
    }
  } else {
#pragma unroll 2
    for (int k0 = k_begin; k0 < k_end; k0 += 16) {
      Frags f;
      load(f, k0);
      products(f);
    }
  }
}

// acc[MT][NT] += A[m0 : m0 + 16 MT, k_begin : k_end] · B[k_begin : k_end, n0 : n0 + 8 NT].
// Column tiles that start at or beyond n_limit are skipped (their accumulators stay as they are);
// k_begin, k_end are multiples of 16. Tiles go in pairs; an odd NT's last tile goes alone.
// PREFETCH: step k + 16's fragments are loaded before step k's products issue (two register
// sets). Loads and products are volatile asm, kept in the written order, so without it each
// product waits on the ldmatrix just before it (grad_chunk's largest stall, ncu 2026-11-30). It
// paid where registers were to spare: wy_prep 1.4-5.5%, DeltaNet's and GDN's grad_chunk 1.1-1.3%;
// it cost KDA's and GDN2's grad_chunk (at 128 registers) 1.7-3.5% and the replay's wy_replay
// 2.5-16% (DeltaNet's fell from three CTAs an SM to two): H200, 2026-11-30,
// docs/measurements/2026-11-30-s9/gpucheck_mma_prefetch_78fd491.log.
inline constexpr int kAllColumns = 1 << 30;  // an n_limit that skips no column tile
template <int MT, int NT, Lay LA, Lay LB, bool PREFETCH = false>
__device__ __forceinline__ void warp_mma(float (&acc)[MT][NT][4], const bf16_t* A, int lda, const bf16_t* B, int ldb,
                                         int m0, int n0, int k_begin, int k_end, int n_limit = kAllColumns) {
  if constexpr (PREFETCH) {
    constexpr int NT2 = NT - NT % 2, NP = NT2 / 2;  // tiles taken in pairs
    struct Frags {
      uint32_t a[MT][4], b[NP > 0 ? NP : 1][4], odd[2];
    };
    auto load = [&](Frags& f, int k0) {
#pragma unroll
      for (int i = 0; i < MT; ++i) load_a_frag<LA>(f.a[i], A, lda, m0 + 16 * i, k0);
#pragma unroll
      for (int j = 0; j < NP; ++j)
        if (n0 + 16 * j < n_limit) load_b_frag2<LB>(f.b[j], B, ldb, k0, n0 + 16 * j);
      if constexpr (NT % 2 == 1) {
        if (n0 + 8 * NT2 < n_limit) load_b_frag1<LB>(f.odd, B, ldb, k0, n0 + 8 * NT2);
      }
    };
    auto products = [&](const Frags& f) {
#pragma unroll
      for (int j = 0; j < NP; ++j) {
        if (n0 + 16 * j >= n_limit) break;
#pragma unroll
        for (int i = 0; i < MT; ++i) {
          mma_bf16_16816(acc[i][2 * j], f.a[i], f.b[j][0], f.b[j][1]);
          mma_bf16_16816(acc[i][2 * j + 1], f.a[i], f.b[j][2], f.b[j][3]);
        }
      }
      if constexpr (NT % 2 == 1) {
        if (n0 + 8 * NT2 < n_limit) {
#pragma unroll
          for (int i = 0; i < MT; ++i) mma_bf16_16816(acc[i][NT2], f.a[i], f.odd[0], f.odd[1]);
        }
      }
    };
    frag_k_loop<Frags, true>(k_begin, k_end, load, products);
    return;
  }
  constexpr int NT2 = NT - NT % 2;  // tiles taken in pairs
#pragma unroll 2
  for (int k0 = k_begin; k0 < k_end; k0 += 16) {
    uint32_t a[MT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i) load_a_frag<LA>(a[i], A, lda, m0 + 16 * i, k0);
#pragma unroll
    for (int j = 0; j < NT2; j += 2) {
      if (n0 + 8 * j >= n_limit) break;
      uint32_t b[4];
      load_b_frag2<LB>(b, B, ldb, k0, n0 + 8 * j);
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        mma_bf16_16816(acc[i][j], a[i], b[0], b[1]);
        mma_bf16_16816(acc[i][j + 1], a[i], b[2], b[3]);
      }
    }
    if constexpr (NT % 2 == 1) {
      if (n0 + 8 * NT2 < n_limit) {
        uint32_t b[2];
        load_b_frag1<LB>(b, B, ldb, k0, n0 + 8 * NT2);
#pragma unroll
        for (int i = 0; i < MT; ++i) mma_bf16_16816(acc[i][NT2], a[i], b[0], b[1]);
      }
    }
  }
}

// Two products with one column operand: acc0 (+)= A0[m0 : m0 + 16, k] · B[k, n0 : n0 + 8 NT] and
// acc1 (+)= A1[...] · B[...] over k in [k_begin, k_end), each B fragment loaded once for both
// (warp_mma's loads would take it twice). n_limit and PREFETCH as warp_mma's; NT even.
template <int NT, Lay LA, Lay LB, bool PREFETCH = false>
__device__ __forceinline__ void warp_mma_pair(float (&acc0)[1][NT][4], float (&acc1)[1][NT][4], const bf16_t* A0,
                                              const bf16_t* A1, int lda, const bf16_t* B, int ldb, int m0, int n0,
                                              int k_begin, int k_end, int n_limit = kAllColumns) {
  static_assert(NT % 2 == 0, "column tiles in pairs");
  constexpr int NP = NT / 2;
  struct Frags {
    uint32_t a0[4], a1[4], b[NP][4];
  };
  auto load = [&](Frags& f, int k0) {
    load_a_frag<LA>(f.a0, A0, lda, m0, k0);
    load_a_frag<LA>(f.a1, A1, lda, m0, k0);
#pragma unroll
    for (int j = 0; j < NP; ++j)
      if (n0 + 16 * j < n_limit) load_b_frag2<LB>(f.b[j], B, ldb, k0, n0 + 16 * j);
  };
  auto products = [&](const Frags& f) {
#pragma unroll
    for (int j = 0; j < NP; ++j) {
      if (n0 + 16 * j >= n_limit) break;
      mma_bf16_16816(acc0[0][2 * j], f.a0, f.b[j][0], f.b[j][1]);
      mma_bf16_16816(acc0[0][2 * j + 1], f.a0, f.b[j][2], f.b[j][3]);
      mma_bf16_16816(acc1[0][2 * j], f.a1, f.b[j][0], f.b[j][1]);
      mma_bf16_16816(acc1[0][2 * j + 1], f.a1, f.b[j][2], f.b[j][3]);
    }
  };
  frag_k_loop<Frags, PREFETCH>(k_begin, k_end, load, products);
}

// Two products with one row operand: acc0 (+)= A[m0 : m0 + 16, k] · B0[k, n00 : n00 + 8 N0] and
// acc1 (+)= A[...] · B1[k, n01 : n01 + 8 N1] over k in [k_begin, k_end), each A fragment loaded
// once for both. PREFETCH as warp_mma's; N0, N1 even.
template <int N0, int N1, Lay LA, Lay LB, bool PREFETCH = false>
__device__ __forceinline__ void warp_mma_shared_a(float (&acc0)[1][N0][4], float (&acc1)[1][N1][4], const bf16_t* A, int lda,
                                                  const bf16_t* B0, int ldb0, int n00, const bf16_t* B1, int ldb1, int n01,
                                                  int m0, int k_begin, int k_end) {
  static_assert(N0 % 2 == 0 && N1 % 2 == 0, "column tiles in pairs");
  struct Frags {
    uint32_t a[4], b0[N0 / 2][4], b1[N1 / 2][4];
  };
  auto load = [&](Frags& f, int k0) {
    load_a_frag<LA>(f.a, A, lda, m0, k0);
#pragma unroll
    for (int j = 0; j < N0 / 2; ++j) load_b_frag2<LB>(f.b0[j], B0, ldb0, k0, n00 + 16 * j);
#pragma unroll
    for (int j = 0; j < N1 / 2; ++j) load_b_frag2<LB>(f.b1[j], B1, ldb1, k0, n01 + 16 * j);
  };
  auto products = [&](const Frags& f) {
#pragma unroll
    for (int j = 0; j < N0 / 2; ++j) {
      mma_bf16_16816(acc0[0][2 * j], f.a, f.b0[j][0], f.b0[j][1]);
      mma_bf16_16816(acc0[0][2 * j + 1], f.a, f.b0[j][2], f.b0[j][3]);
    }
#pragma unroll
    for (int j = 0; j < N1 / 2; ++j) {
      mma_bf16_16816(acc1[0][2 * j], f.a, f.b1[j][0], f.b1[j][1]);
      mma_bf16_16816(acc1[0][2 * j + 1], f.a, f.b1[j][2], f.b1[j][3]);
    }
  };
  frag_k_loop<Frags, PREFETCH>(k_begin, k_end, load, products);
}

// Visits the warp's MT×NT accumulator tile at (m0, n0) by column pairs: f(i, j, h, row, col) for
// the entries acc[i][j][2h] at (row, col) and acc[i][j][2h + 1] at (row, col + 1).
template <int MT, int NT, class F>
__device__ __forceinline__ void frag_visit_pairs(int m0, int n0, F&& f) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) f(i, j, h, m0 + 16 * i + g + 8 * h, n0 + 8 * j + 2 * t);
}

// Calls f(row, col, value&) for every accumulator element of the warp's tile at (m0, n0).
template <int MT, int NT, class F>
__device__ __forceinline__ void frag_for_each(float (&acc)[MT][NT][4], int m0, int n0, F&& f) {
  frag_visit_pairs<MT, NT>(m0, n0, [&](int i, int j, int h, int r, int c) {
    f(r, c, acc[i][j][2 * h]);
    f(r, c + 1, acc[i][j][2 * h + 1]);
  });
}

// Stores rows r < valid of the warp's tile as bf16 at dst[r * ld + c], times alpha (adjacent
// column pairs as one 32-bit store); dst is shared or global memory.
// The two row addresses and validities of a thread are formed once (the element offsets are then
// immediates): per-element 64-bit row arithmetic and a branch per store were a fifth of
// grad_chunk's instructions, and its code outgrew the instruction cache.
template <int MT, int NT, class Index>
__device__ __forceinline__ void frag_store_rows(const float (&acc)[MT][NT][4], bf16_t* dst, Index ld, int m0, int n0,
                                                int valid, float alpha) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int i = 0; i < MT; ++i) {
    const int r0 = m0 + 16 * i + g;
    bf16_t* const row0 = dst + r0 * ld + n0 + 2 * t;
    bf16_t* const row1 = row0 + 8 * ld;
    const bool v0 = r0 < valid, v1 = r0 + 8 < valid;
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      if (v0) *reinterpret_cast<__nv_bfloat162*>(row0 + 8 * j) = __floats2bfloat162_rn(alpha * acc[i][j][0], alpha * acc[i][j][1]);
      if (v1) *reinterpret_cast<__nv_bfloat162*>(row1 + 8 * j) = __floats2bfloat162_rn(alpha * acc[i][j][2], alpha * acc[i][j][3]);
    }
  }
}

// Stores the warp's whole tile as bf16 in shared memory at dst[row * ld + col].
template <int MT, int NT>
__device__ __forceinline__ void frag_store_bf16(const float (&acc)[MT][NT][4], bf16_t* dst, int ld, int m0, int n0) {
  frag_visit_pairs<MT, NT>(m0, n0, [&](int i, int j, int h, int r, int c) {
    *reinterpret_cast<__nv_bfloat162*>(dst + r * ld + c) = __floats2bfloat162_rn(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
  });
}

}  // namespace rewy::delta::cuda_impl
