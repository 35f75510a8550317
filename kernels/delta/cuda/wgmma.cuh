// Warpgroup tensor-core products (Hopper wgmma) for the part-2 kernels: bf16 operands in shared
// memory through matrix descriptors, fp32 accumulators in registers, issued asynchronously by the
// 128 threads of one warpgroup.
//
// Shared-memory tiles are K-major with the 128-byte swizzle (what TMA's SWIZZLE_128B writes): a
// tile of R rows and 64 bf16 columns (a "panel", R × 128 bytes, 1024-byte aligned) stores element
// (r, c) at r·64 + ((c/8 ⊕ r mod 8)·8 + c mod 8); a wider tile is panels side by side, panel p
// at p·R·64 elements. One descriptor addresses 8-row groups 1024 bytes apart (SBO); a k-step of
// 16 columns inside a panel advances the start address by 32 bytes (the hardware swizzles the
// final address, so the logical offset is what the descriptor holds).
//
// Accumulator fragment of m64nN (thread t = 32w + 4g + q of the warpgroup): d[4j + e] sits at row
// 16w + g + 8(e / 2), column 8j + 2q + e mod 2 — per warp, the m16n8 layout of mma.sync.
#pragma once
#include "kernels/delta/cuda/mma.cuh"

namespace rewy::delta::cuda_impl::wg {

constexpr int kPanel = 64;  // bf16 columns per 128-byte swizzle panel

// Element offset of (r, c) in a swizzled K-major tile of R rows (any number of 64-column panels).
template <int R>
__device__ __forceinline__ int tile_offset(int r, int c) {
  const int p = c / kPanel, cc = c % kPanel;
  return p * R * kPanel + r * kPanel + ((((cc >> 3) ^ (r & 7)) << 3) | (cc & 7));
}

__device__ __forceinline__ void fence_operands() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Generic-proxy writes to shared memory (st.shared) become visible to wgmma's async proxy.
__device__ __forceinline__ void fence_smem_writes() { fence_proxy_async_smem(); }

// Which dimension of an operand is contiguous in its tile: K (rows of A [M][K] or B [N][K]) or MN
// (the operand stored as [K][M] or [K][N], rows of M or N elements; MN needs M, N >= 64 for the
// 128-byte swizzle). Both use the tile_offset layout, with the tile's rows being M/N or K.
enum class Major { K, MN };

// Descriptor of a 128-byte-swizzled operand at p. K-major: 8-row groups 1024 bytes apart.
// MN-major: 8-row (k) groups 1024 bytes apart (SBO), 64-element panels along MN panel_bytes apart (LBO).
template <Major M>
__device__ __forceinline__ uint64_t desc_sw128(const bf16_t* p, uint32_t panel_bytes) {
  const uint32_t a = smem_addr(p);
  uint64_t d = uint64_t((a & 0x3FFFF) >> 4);                                      // start address (bits 0-13)
  d |= uint64_t(M == Major::K ? 1 : (panel_bytes >> 4) & 0x3FFF) << 16;           // leading byte offset
  d |= uint64_t(1024 >> 4) << 32;                                                 // stride byte offset
  d |= uint64_t(1) << 62;                                                         // 128-byte swizzle
  return d;
}

// d (+)= op(A)·op(B) for one k-step of 16 (m64nNk16, bf16 in, fp32 accumulate); TA, TB = 1 for
// MN-major operands. accumulate = 0 overwrites d.
// One specialisation per width N: inline asm spells out its N/2 accumulator operands.
template <int N>
struct Mma;

template <>
struct Mma<16> {
  template <int TA, int TB>
  __device__ __forceinline__ static void run(float (&d)[8], uint64_t a, uint64_t b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, %11, %12;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "l"(a), "l"(b), "r"(accumulate), "n"(TA), "n"(TB)
        : "memory");
  }
};

template <>
struct Mma<32> {
  template <int TA, int TB>
  __device__ __forceinline__ static void run(float (&d)[16], uint64_t a, uint64_t b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, %19, %20;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "l"(a), "l"(b), "r"(accumulate), "n"(TA), "n"(TB)
        : "memory");
  }
};

template <>
struct Mma<64> {
  template <int TA, int TB>
  __device__ __forceinline__ static void run(float (&d)[32], uint64_t a, uint64_t b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, %35, %36;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(a), "l"(b), "r"(accumulate), "n"(TA), "n"(TB)
        : "memory");
  }
};

template <>
struct Mma<128> {
  template <int TA, int TB>
  __device__ __forceinline__ static void run(float (&d)[64], uint64_t a, uint64_t b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, %67, %68;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(a), "l"(b), "r"(accumulate), "n"(TA), "n"(TB)
        : "memory");
  }
};

// d (+)= A·B for one k-step of 16 with A (64×16) from registers: thread t = 32w + 4g + q holds
// a[0] = (row 16w + g, columns 2q, 2q + 1), a[1] = (row + 8, same), a[2], a[3] the same at
// columns + 8 (the accumulator's n8 tiles 2k, 2k + 1 pack: frag_to_a); B through its descriptor,
// TB = 1 for an MN-major B. (The register-resident state pass, state_fwd_reg.cuh.)
template <int N>
struct MmaRegA;

template <>
struct MmaRegA<64> {
  template <int TB>
  __device__ __forceinline__ static void run(float (&d)[32], const uint32_t (&a)[4], uint64_t b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate), "n"(TB)
        : "memory");
  }
};

template <>
struct MmaRegA<128> {
  template <int TB>
  __device__ __forceinline__ static void run(float (&d)[64], const uint32_t (&a)[4], uint64_t b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate), "n"(TB)
        : "memory");
  }
};

// The accumulator of an m64nK product (K / 2 floats) as K / 16 register A fragments of bf16, for
// a product that takes it as its left operand without a trip through shared memory.
template <int K>
__device__ __forceinline__ void frag_to_a(const float (&acc)[K / 2], uint32_t (&a)[K / 16][4]) {
#pragma unroll
  for (int k = 0; k < K / 16; ++k) {
    a[k][0] = pack_bf16x2(acc[8 * k], acc[8 * k + 1]);
    a[k][1] = pack_bf16x2(acc[8 * k + 2], acc[8 * k + 3]);
    a[k][2] = pack_bf16x2(acc[8 * k + 4], acc[8 * k + 5]);
    a[k][3] = pack_bf16x2(acc[8 * k + 6], acc[8 * k + 7]);
  }
}

// acc (+)= A·B over K with A (64×K) in registers (frag_to_a's) and B a swizzled tile as
// gemm_issue's (MB = K: stored [N][K]; MN: [K][N], K rows a panel). Issues K / 16 products; the
// caller commits and waits, then fences the accumulator (fence_accumulator).
template <int N, int K, Major MB>
__device__ __forceinline__ void gemm_reg_a_issue(float (&acc)[N / 2], const uint32_t (&a)[K / 16][4], const bf16_t* B,
                                                 bool accumulate) {
  static_assert(K % 16 == 0, "K is a multiple of 16");
  static_assert(MB == Major::K || N % kPanel == 0, "an MN-major B needs N a multiple of 64");
  fence_operands();
#pragma unroll
  for (int k = 0; k < K / 16; ++k) {
    const bf16_t* b = MB == Major::K ? B + (k / 4) * N * kPanel + (k % 4) * 16 : B + k * 16 * kPanel;
    MmaRegA<N>::template run<MB == Major::MN>(acc, a[k], desc_sw128<MB>(b, K * kPanel * 2), accumulate || k > 0);
  }
}

// Keeps the compiler from moving reads or writes of acc across this point (an accumulator a
// wgmma still writes is read only after its wait).
template <int N>
__device__ __forceinline__ void fence_accumulator(float (&acc)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}

// acc (+)= A·B over K for one warpgroup: A is 64×K, B is K×N, each a 128-byte-swizzled tile in
// the tile_offset layout: MA = K: A stored [64][K]; MA = MN: A stored [K][64]; MB = K: B stored
// [N][K]; MB = MN: B stored [K][N]. The m64nN result is in acc. Issues K/16 products and waits.
// gemm_issue: the products only; the caller commits and waits (several products in flight, one
// pipeline drain). BROWS: a K-major B's tile rows when B is N of them from row 8i of a taller tile
// (its panels BROWS · 64 elements apart).
template <int N, int K, Major MA, Major MB, int BROWS = N>
__device__ __forceinline__ void gemm_issue(float (&acc)[N / 2], const bf16_t* A, const bf16_t* B, bool accumulate) {
  static_assert(K % 16 == 0, "K is a multiple of 16");
  static_assert(MB == Major::K || N % kPanel == 0, "an MN-major B needs N a multiple of 64");
  static_assert(BROWS == N || (MB == Major::K && BROWS > N && BROWS % 8 == 0), "row blocks of K-major tiles only");
  fence_operands();
#pragma unroll
  for (int k = 0; k < K / 16; ++k) {
    // K-major: the k-th 16 columns (panel k/4, 32 bytes per step inside it); MN-major: rows 16k..
    const bf16_t* a = MA == Major::K ? A + (k / 4) * 64 * kPanel + (k % 4) * 16 : A + k * 16 * kPanel;
    const bf16_t* b = MB == Major::K ? B + (k / 4) * BROWS * kPanel + (k % 4) * 16 : B + k * 16 * kPanel;
    Mma<N>::template run<MA == Major::MN, MB == Major::MN>(acc, desc_sw128<MA>(a, K * kPanel * 2),
                                                          desc_sw128<MB>(b, K * kPanel * 2), accumulate || k > 0);
  }
}
template <int N, int K, Major MA, Major MB>
__device__ __forceinline__ void gemm(float (&acc)[N / 2], const bf16_t* A, const bf16_t* B, bool accumulate) {
  gemm_issue<N, K, MA, MB>(acc, A, B, accumulate);
  commit();
  wait<0>();
}

// The common case: both operands K-major (A [64][K], B [N][K]): acc (+)= A·Bᵀ.
template <int N, int K>
__device__ __forceinline__ void gemm_tn(float (&acc)[N / 2], const bf16_t* A, const bf16_t* B, bool accumulate) {
  gemm<N, K, Major::K, Major::K>(acc, A, B, accumulate);
}

// The warpgroup's m64nN fragment, times alpha, to bf16 in a swizzled K-major tile through one
// stmatrix per 16 columns (lane l gives the address of stored row l mod 8 of 8×8 block l / 8: for
// a warp's 16 rows, blocks (j, rows 0-7), (j, rows 8-15), (j + 1, ...)). TRANS: T[c][row0 + r],
// T of N rows (tile_offset<N>; the transposed write the state passes make of H and E, where
// per-element 2-byte stores and their swizzled addresses took 64 instructions per 16 columns);
// else T[r][c], T of 64 rows (tile_offset<64>; the layout of a wgmma A operand).
// alpha_lo, alpha_hi: factors of the thread's two rows (16w + g, 16w + g + 8).
template <int N, bool TRANS>
__device__ __forceinline__ void stmatrix_fragment(const float (&acc)[N / 2], bf16_t* T, int row0, float alpha_lo,
                                                  float alpha_hi) {
  static_assert(N % 16 == 0, "pairs of n8 tiles");
  const int t = threadIdx.x & 127, w = t >> 5, m = (t & 31) >> 3, i = t & 7;
#pragma unroll
  for (int j = 0; j < N / 8; j += 2) {
    const int jj = j + (m >> 1), half = m & 1;
    const uint32_t a = smem_addr(T + (TRANS ? tile_offset<N>(8 * jj + i, row0 + 16 * w + 8 * half)
                                            : tile_offset<64>(16 * w + 8 * half + i, 8 * jj)));
    const uint32_t r0 = pack_bf16x2(alpha_lo * acc[4 * j], alpha_lo * acc[4 * j + 1]);
    const uint32_t r1 = pack_bf16x2(alpha_hi * acc[4 * j + 2], alpha_hi * acc[4 * j + 3]);
    const uint32_t r2 = pack_bf16x2(alpha_lo * acc[4 * j + 4], alpha_lo * acc[4 * j + 5]);
    const uint32_t r3 = pack_bf16x2(alpha_hi * acc[4 * j + 6], alpha_hi * acc[4 * j + 7]);
    if constexpr (TRANS)
      asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(a), "r"(r0), "r"(r1),
                   "r"(r2), "r"(r3)
                   : "memory");
    else
      asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(a), "r"(r0), "r"(r1), "r"(r2),
                   "r"(r3)
                   : "memory");
  }
}

// Row of this thread's first fragment entries in the warpgroup's m64nN fragment (its second: + 8).
__device__ __forceinline__ int frag_row() { return 16 * ((threadIdx.x & 127) >> 5) + ((threadIdx.x & 31) >> 2); }

// T[c][row0 + r] = bf16(alpha acc(r, c)): H and E transposed for the state passes' products.
template <int N>
__device__ __forceinline__ void store_transposed(const float (&acc)[N / 2], bf16_t* T, int row0, float alpha = 1.f) {
  stmatrix_fragment<N, true>(acc, T, row0, alpha, alpha);
}

// T[c][row0 + r] = bf16(row_scale[r] acc(r, c)): a row-scaled transposed store, acc unchanged.
template <int N>
__device__ __forceinline__ void store_transposed_row_scaled(const float (&acc)[N / 2], bf16_t* T, int row0,
                                                            const float* row_scale) {
  const int r = frag_row();
  stmatrix_fragment<N, true>(acc, T, row0, row_scale[r], row_scale[r + 8]);
}

// T[r][c] = bf16(alpha acc(r, c)), T of 64 rows: a wgmma A operand.
template <int N>
__device__ __forceinline__ void store_rows(const float (&acc)[N / 2], bf16_t* T, float alpha) {
  stmatrix_fragment<N, false>(acc, T, 0, alpha, alpha);
}

// The warpgroup's m64nN fragment of a row-major bf16 tile U [64][LD] (16-byte aligned rows) as
// packed pairs: u[2j + h] holds (row 16w + g + 8h, columns 8j + 2q, + 1), i.e. acc[4j + 2h], +1.
// One ldmatrix per 16 columns instead of 16 two-byte loads.
template <int N, int LD>
__device__ __forceinline__ void load_rows_packed(uint32_t (&u)[N / 4], const bf16_t* U) {
  static_assert(N % 16 == 0 && LD % 8 == 0, "pairs of n8 tiles, 16-byte rows");
  const int t = threadIdx.x & 127, w = t >> 5, m = (t & 31) >> 3, i = t & 7;
#pragma unroll
  for (int j = 0; j < N / 8; j += 2) {
    uint32_t r[4];
    ldsm_x4(r, U + (16 * w + 8 * (m & 1) + i) * LD + 8 * (j + (m >> 1)));
#pragma unroll
    for (int x = 0; x < 4; ++x) u[2 * j + x] = r[x];
  }
}

// Calls f(row, col, value&) for every element of the warpgroup's m64nN fragment.
template <int N, class F>
__device__ __forceinline__ void frag_for_each(float (&acc)[N / 2], F&& f) {
  const int r = frag_row(), q = threadIdx.x & 3;
#pragma unroll
  for (int j = 0; j < N / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) f(r + 8 * (e >> 1), 8 * j + 2 * q + (e & 1), acc[4 * j + e]);
}

}  // namespace rewy::delta::cuda_impl::wg
