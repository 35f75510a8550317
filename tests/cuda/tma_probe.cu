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

template <class T>
T* device_copy(const std::vector<T>& v) {
  T* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, v.size() * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
std::vector<T> host_copy(const T* d, size_t n) {
  std::vector<T> v(n);
  CUDA_CHECK(cudaMemcpy(v.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

}  // namespace

std::vector<uint16_t> tma_tile(const std::vector<uint16_t>& X, int64_t rows, int64_t H, int h, int t0) {
  REWY_CHECK(X.size() == size_t(rows * H * 128), "tma probe: X must be [rows][H][128]");
  bf16_t* dX = reinterpret_cast<bf16_t*>(device_copy(X));
  bf16_t* dOut = nullptr;
  CUDA_CHECK(cudaMalloc(&dOut, 64 * 128 * 2));
  CUDA_CHECK(cudaMemset(dOut, 0xFF, 64 * 128 * 2));  // NaN
  const CUtensorMap map = tma::make_token_map(dX, rows, H, 128);
  const int smem = 1024 + kTileBytes;
  CUDA_CHECK(cudaFuncSetAttribute(tile_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  tile_kernel<<<1, 128, smem>>>(map, h, t0, dOut);
  CUDA_CHECK(cudaGetLastError());
  std::vector<uint16_t> out = host_copy(reinterpret_cast<uint16_t*>(dOut), 64 * 128);
  CUDA_CHECK(cudaFree(dX));
  CUDA_CHECK(cudaFree(dOut));
  return out;
}

std::vector<float> tma_qk(const std::vector<uint16_t>& Q, const std::vector<uint16_t>& K, int64_t rows, int64_t H,
                          int h, int t0) {
  REWY_CHECK(Q.size() == size_t(rows * H * 128) && K.size() == Q.size(), "tma probe: Q, K must be [rows][H][128]");
  bf16_t* dQ = reinterpret_cast<bf16_t*>(device_copy(Q));
  bf16_t* dK = reinterpret_cast<bf16_t*>(device_copy(K));
  float* dP = nullptr;
  CUDA_CHECK(cudaMalloc(&dP, 64 * 64 * 4));
  CUDA_CHECK(cudaMemset(dP, 0xFF, 64 * 64 * 4));
  const CUtensorMap qmap = tma::make_token_map(dQ, rows, H, 128), kmap = tma::make_token_map(dK, rows, H, 128);
  const int smem = 1024 + 2 * kTileBytes;
  CUDA_CHECK(cudaFuncSetAttribute(qk_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  qk_kernel<<<1, 128, smem>>>(qmap, kmap, h, t0, dP);
  CUDA_CHECK(cudaGetLastError());
  std::vector<float> P = host_copy(dP, 64 * 64);
  CUDA_CHECK(cudaFree(dQ));
  CUDA_CHECK(cudaFree(dK));
  CUDA_CHECK(cudaFree(dP));
  return P;
}

}  // namespace rewy::test
