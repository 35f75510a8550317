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

// Matrix descriptor of a K-major, 128-byte-swizzled operand starting at p (a panel's first row,
// advanced by 16·k elements for the k-th 16-column step).
__device__ __forceinline__ uint64_t desc_k_sw128(const bf16_t* p) {
  const uint32_t a = smem_addr(p);
  uint64_t d = uint64_t((a & 0x3FFFF) >> 4);  // start address, 16-byte units (bits 0-13)
  d |= uint64_t(1) << 16;                     // leading byte offset: unused for swizzled K-major
  d |= uint64_t(1024 >> 4) << 32;             // stride byte offset: 8 rows × 128 bytes
  d |= uint64_t(1) << 62;                     // layout: 128-byte swizzle
  return d;
}

__device__ __forceinline__ void fence_operands() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Generic-proxy writes to shared memory (st.shared) become visible to wgmma's async proxy.
__device__ __forceinline__ void fence_smem_writes() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// d (+)= A·Bᵀ for one k-step of 16: A 64×16 and B N×16, both K-major (descriptors a, b).
// accumulate = 0 overwrites d.
template <int N>
__device__ __forceinline__ void mma_tn(float (&d)[N / 2], uint64_t a, uint64_t b, int accumulate);

template <>
__device__ __forceinline__ void mma_tn<16>(float (&d)[8], uint64_t a, uint64_t b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "l"(a), "l"(b), "r"(accumulate)
      : "memory");
}

template <>
__device__ __forceinline__ void mma_tn<32>(float (&d)[16], uint64_t a, uint64_t b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "l"(a), "l"(b), "r"(accumulate)
      : "memory");
}

template <>
__device__ __forceinline__ void mma_tn<64>(float (&d)[32], uint64_t a, uint64_t b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(a), "l"(b), "r"(accumulate)
      : "memory");
}

template <>
__device__ __forceinline__ void mma_tn<128>(float (&d)[64], uint64_t a, uint64_t b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(a), "l"(b), "r"(accumulate)
      : "memory");
}

// acc (+)= A·Bᵀ over K: A [64][K] and B [N][K] swizzled K-major tiles (tile_offset layout), the
// warpgroup's m64nN fragment in acc. Issues the K/16 products and waits for them.
template <int N, int K>
__device__ __forceinline__ void gemm_tn(float (&acc)[N / 2], const bf16_t* A, const bf16_t* B, bool accumulate) {
  static_assert(K % 16 == 0, "K is a multiple of 16");
  fence_operands();
#pragma unroll
  for (int k = 0; k < K / 16; ++k) {
    const int panel = k / 4, step = k % 4;
    mma_tn<N>(acc, desc_k_sw128(A + panel * 64 * kPanel + step * 16), desc_k_sw128(B + panel * N * kPanel + step * 16),
              accumulate || k > 0);
  }
  commit();
  wait<0>();
}

// Calls f(row, col, value&) for every element of the warpgroup's m64nN fragment.
template <int N, class F>
__device__ __forceinline__ void frag_for_each(float (&acc)[N / 2], F&& f) {
  const int t = threadIdx.x & 127, w = t >> 5, g = (t & 31) >> 2, q = t & 3;
#pragma unroll
  for (int j = 0; j < N / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) f(16 * w + g + 8 * (e >> 1), 8 * j + 2 * q + (e & 1), acc[4 * j + e]);
}

}  // namespace rewy::delta::cuda_impl::wg
