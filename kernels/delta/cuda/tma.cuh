// Tensor Memory Accelerator (TMA) loads and mbarriers for the part-2 kernels.
//
// Host: make_token_map describes a token-major bf16 tensor [rows][H][D] (q, k, v, dO, ... as
// [B·T][H][D]) for boxes of 64 tokens × 1 head × 64 channels with the 128-byte swizzle: one box
// lands as one 64-row panel of wgmma.cuh's tile_offset layout (D = 128: two boxes, two panels).
// Rows past the tensor's end arrive as zeros.
// Device: one thread arms an mbarrier with the bytes to expect and issues the copies; every
// consumer waits on the barrier's phase parity.
#pragma once
#include <cuda.h>

#include <cstdint>

#include "kernels/delta/cuda/mma.cuh"

namespace rewy::delta::cuda_impl::tma {

// [rows][H][D] bf16 at base, D a multiple of 64; boxes of box_rows tokens × 1 head × 64 channels.
CUtensorMap make_token_map(const void* base, int64_t rows, int64_t H, int64_t D, int box_rows = 64);

// The forward state pass's tiles that every V-slice of a (sequence, head) reads: W, K̄, Q̂
// [tok][H][K] and P [tok][H][C] (a kernel parameter: __grid_constant__).
struct StateMaps {
  CUtensorMap W, Kb, Qh, P;
};

// The register pass's tiles (state_fwd_reg.cuh, beside wy_prep): 𝒯 (Diag(β))
// and P [tok][H][C], k and q [tok][H][K] (GDN's raw, DeltaNet's K̄ = k, Q̂ = q), v and o [tok][H][V].
struct RegMaps {
  CUtensorMap T, K, Q, P, V, O;
};

__device__ __forceinline__ void mbar_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
// Makes initialised barriers visible to the async proxy (TMA); then a block barrier.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also announces `bytes` of transactions to come.
__device__ __forceinline__ void mbar_arrive_expect(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}
// One plain arrival (the barrier's count of arrivals, no transactions).
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// Copies the box at (channel c, head h, token row t) of `map` into shared memory at dst (1024-byte
// aligned for the 128-byte swizzle), completing on bar.
__device__ __forceinline__ void load_box(void* dst, const CUtensorMap* map, int c, int h, int t, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c), "r"(h), "r"(t), "r"(smem_addr(bar))
      : "memory");
}

// Shared-memory box at src (1024-byte aligned, the 128-byte swizzle) to (channel c, head h, token
// row t) of `map` (rows past the tensor's end are dropped), as one bulk async-group; then commit.
__device__ __forceinline__ void store_box(const CUtensorMap* map, int c, int h, int t, const void* src) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(c), "r"(h), "r"(t), "r"(smem_addr(src))
               : "memory");
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// The issuing thread's bulk stores have read their shared memory (it may be written again).
__device__ __forceinline__ void store_read_wait() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// ... and their writes are done (before the kernel ends).
__device__ __forceinline__ void store_wait() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// Global data another grid wrote (generic stores, acquired through a flag) is read next by TMA.
__device__ __forceinline__ void fence_proxy_async_global() { asm volatile("fence.proxy.async.global;\n" ::: "memory"); }

// load_box into the same shared-memory offset of every CTA of the cluster in `cta_mask`, each
// completing on its own barrier at bar's offset (cluster rank r: bit r).
__device__ __forceinline__ void load_box_multicast(void* dst, const CUtensorMap* map, int c, int h, int t, uint64_t* bar,
                                                   uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, "
      "{%2, %3, %4}], [%5], %6;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c), "r"(h), "r"(t), "r"(smem_addr(bar)), "h"(cta_mask)
      : "memory");
}

// Thread block clusters: this CTA's rank, and the cluster-wide barrier in two halves (every thread
// of every CTA arrives, then waits; arrive releases this CTA's shared-memory reads and writes,
// wait acquires the others').
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); }

}  // namespace rewy::delta::cuda_impl::tma
