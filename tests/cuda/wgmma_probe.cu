// One warpgroup's wgmma product on swizzled shared-memory tiles, for gpu_test_wgmma.
#include <cuda_runtime.h>

#include "engine/cuda/check_cuda.h"
#include "kernels/delta/cuda/wgmma.cuh"
#include "tests/cuda/wgmma_probe.h"

namespace rewy::test {
namespace {

using delta::cuda_impl::bf16_t;
namespace wg = delta::cuda_impl::wg;

using wg::Major;

// A [64][K] and B [N][K] (logical, row-major in global memory) laid out as MA / MB tiles.
template <int N, int K, Major MA, Major MB>
__global__ void __launch_bounds__(128) wgmma_kernel(const bf16_t* A, const bf16_t* B, float* D, int twice) {
  extern __shared__ char raw[];
  const uint32_t pad = (1024 - (delta::cuda_impl::smem_addr(raw) & 1023)) & 1023;  // panels are 1024-aligned
  bf16_t* As = reinterpret_cast<bf16_t*>(raw + pad);
  bf16_t* Bs = As + 64 * K;  // 64·K·2 bytes: a multiple of 1024
  for (int i = threadIdx.x; i < 64 * K; i += blockDim.x) {
    const int m = i / K, k = i % K;
    As[MA == Major::K ? wg::tile_offset<64>(m, k) : wg::tile_offset<K>(k, m)] = A[i];
  }
  for (int i = threadIdx.x; i < N * K; i += blockDim.x) {
    const int n = i / K, k = i % K;
    Bs[MB == Major::K ? wg::tile_offset<N>(n, k) : wg::tile_offset<K>(k, n)] = B[i];
  }
  wg::fence_smem_writes();
  __syncthreads();
  float acc[N / 2];
  wg::gemm<N, K, MA, MB>(acc, As, Bs, false);
  if (twice) wg::gemm<N, K, MA, MB>(acc, As, Bs, true);
  wg::frag_for_each<N>(acc, [&](int r, int c, float& x) { D[r * N + c] = x; });
}

template <int N, int K, Major MA, Major MB>
void launch(const bf16_t* A, const bf16_t* B, float* D, bool twice, cudaStream_t s) {
  const size_t smem = 1024 + size_t(64 + N) * K * 2;
  auto* kernel = wgmma_kernel<N, K, MA, MB>;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  kernel<<<1, 128, smem, s>>>(A, B, D, twice ? 1 : 0);
  CUDA_CHECK(cudaGetLastError());
}

template <int N, int K>
void launch_majors(bool a_mn, bool b_mn, const bf16_t* A, const bf16_t* B, float* D, bool twice, cudaStream_t s) {
  if (!a_mn && !b_mn) return launch<N, K, Major::K, Major::K>(A, B, D, twice, s);
  if (a_mn && !b_mn) return launch<N, K, Major::MN, Major::K>(A, B, D, twice, s);
  if constexpr (N % 64 == 0) {
    if (!a_mn) return launch<N, K, Major::K, Major::MN>(A, B, D, twice, s);
    return launch<N, K, Major::MN, Major::MN>(A, B, D, twice, s);
  }
  REWY_FAIL("wgmma probe: an MN-major B needs N of 64 or 128, got {}", N);
}

template <int K>
void launch_n(int N, bool a_mn, bool b_mn, const bf16_t* A, const bf16_t* B, float* D, bool twice, cudaStream_t s) {
  switch (N) {
    case 16: return launch_majors<16, K>(a_mn, b_mn, A, B, D, twice, s);
    case 32: return launch_majors<32, K>(a_mn, b_mn, A, B, D, twice, s);
    case 64: return launch_majors<64, K>(a_mn, b_mn, A, B, D, twice, s);
    case 128: return launch_majors<128, K>(a_mn, b_mn, A, B, D, twice, s);
  }
  REWY_FAIL("wgmma probe: N must be 16, 32, 64 or 128, got {}", N);
}

}  // namespace

void wgmma(const Tensor& A, const Tensor& B, Tensor& D, bool a_mn, bool b_mn, bool twice, const Stream& s) {
  const int64_t K = A.size(1), N = B.size(0);
  REWY_CHECK(K == 64 || K == 128, "wgmma probe: K must be 64 or 128, got {}", K);
  REWY_CHECK(A.shape() == Shape({64, K}) && B.shape() == Shape({N, K}) && D.shape() == Shape({64, N}),
             "wgmma probe: shapes A {}, B {}, D {}", A.str(), B.str(), D.str());
  REWY_CHECK(A.dtype() == DType::BF16 && B.dtype() == DType::BF16 && D.dtype() == DType::F32 && A.is_contiguous() &&
                 B.is_contiguous() && D.is_contiguous() && A.device().is_cuda(),
             "wgmma probe: A, B contiguous bf16 and D contiguous f32 on the GPU");
  const auto* a = static_cast<const bf16_t*>(A.data_ptr());
  const auto* b = static_cast<const bf16_t*>(B.data_ptr());
  auto* d = static_cast<float*>(D.data_ptr());
  const auto st = static_cast<cudaStream_t>(s.handle);
  if (K == 64) launch_n<64>(int(N), a_mn, b_mn, a, b, d, twice, st);
  else launch_n<128>(int(N), a_mn, b_mn, a, b, d, twice, st);
}

}  // namespace rewy::test
