// TMA loads into swizzled tiles, alone and feeding wgmma, for gpu_test_tma.
#include <cuda_runtime.h>

#include "engine/cuda/check_cuda.h"
#include "kernels/delta/cuda/tma.cuh"
#include "kernels/delta/cuda/wgmma.cuh"
#include "tests/cuda/tma_probe.h"

namespace rewy::test {
namespace {

using delta::cuda_impl::bf16_t;
namespace wg = delta::cuda_impl::wg;
namespace tma = delta::cuda_impl::tma;

constexpr int kTileBytes = 64 * 128 * 2;  // one 64-token × 128-channel tile: two swizzled panels

__device__ bf16_t* aligned_smem(char* raw) {
  return reinterpret_cast<bf16_t*>(raw + ((1024 - (delta::cuda_impl::smem_addr(raw) & 1023)) & 1023));
}

// Both 64-channel boxes of (head h, tokens t0..t0+63) of `map` into dst, on bar (thread 0 issues).
__device__ void load_tile(bf16_t* dst, const CUtensorMap* map, int h, int t0, uint64_t* bar) {
  tma::load_box(dst, map, 0, h, t0, bar);
  tma::load_box(dst + 64 * 64, map, 64, h, t0, bar);
}

__global__ void tile_kernel(const __grid_constant__ CUtensorMap map, int h, int t0, bf16_t* out) {
  extern __shared__ char raw[];
  __shared__ alignas(8) uint64_t bar;
  bf16_t* tile = aligned_smem(raw);
  if (threadIdx.x == 0) {
    tma::mbar_init(&bar, 1);
    tma::fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    tma::mbar_arrive_expect(&bar, kTileBytes);
    load_tile(tile, &map, h, t0, &bar);
  }
  tma::mbar_wait(&bar, 0);
  for (int i = threadIdx.x; i < 64 * 128; i += blockDim.x) out[i] = tile[wg::tile_offset<64>(i / 128, i % 128)];
}

__global__ void __launch_bounds__(128) qk_kernel(const __grid_constant__ CUtensorMap qmap,
                                                 const __grid_constant__ CUtensorMap kmap, int h, int t0, float* P) {
  extern __shared__ char raw[];
  __shared__ alignas(8) uint64_t bar;
  bf16_t* qs = aligned_smem(raw);
  bf16_t* ks = qs + 64 * 128;
  if (threadIdx.x == 0) {
    tma::mbar_init(&bar, 1);
    tma::fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    tma::mbar_arrive_expect(&bar, 2 * kTileBytes);
    load_tile(qs, &qmap, h, t0, &bar);
    load_tile(ks, &kmap, h, t0, &bar);
  }
  tma::mbar_wait(&bar, 0);
  float acc[32];
  wg::gemm_tn<64, 128>(acc, qs, ks, false);
  wg::frag_for_each<64>(acc, [&](int r, int c, float& x) { P[r * 64 + c] = x; });
}

void check_tokens(const Tensor& X, const char* name) {
  REWY_CHECK(X.dim() == 3 && X.size(2) == 128 && X.dtype() == DType::BF16 && X.is_contiguous() && X.device().is_cuda(),
             "tma probe: {} must be a contiguous [rows][H][128] bf16 tensor on the GPU, got {}", name, X.str());
}

}  // namespace

void tma_tile(const Tensor& X, int h, int t0, Tensor& tile, const Stream& s) {
  check_tokens(X, "X");
  REWY_CHECK(tile.shape() == Shape({64, 128}) && tile.dtype() == DType::BF16, "tma probe: tile must be [64][128] bf16");
  const CUtensorMap map = tma::make_token_map(X.data_ptr(), X.size(0), X.size(1), 128);
  const int smem = 1024 + kTileBytes;
  CUDA_CHECK(cudaFuncSetAttribute(tile_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  tile_kernel<<<1, 128, smem, static_cast<cudaStream_t>(s.handle)>>>(map, h, t0, static_cast<bf16_t*>(tile.data_ptr()));
  CUDA_CHECK(cudaGetLastError());
}

void tma_qk(const Tensor& Q, const Tensor& K, int h, int t0, Tensor& P, const Stream& s) {
  check_tokens(Q, "Q");
  check_tokens(K, "K");
  REWY_CHECK(Q.shape() == K.shape(), "tma probe: Q {} and K {} differ", Q.str(), K.str());
  REWY_CHECK(P.shape() == Shape({64, 64}) && P.dtype() == DType::F32, "tma probe: P must be [64][64] f32");
  const CUtensorMap qmap = tma::make_token_map(Q.data_ptr(), Q.size(0), Q.size(1), 128);
  const CUtensorMap kmap = tma::make_token_map(K.data_ptr(), K.size(0), K.size(1), 128);
  const int smem = 1024 + 2 * kTileBytes;
  CUDA_CHECK(cudaFuncSetAttribute(qk_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  qk_kernel<<<1, 128, smem, static_cast<cudaStream_t>(s.handle)>>>(qmap, kmap, h, t0, static_cast<float*>(P.data_ptr()));
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace rewy::test
