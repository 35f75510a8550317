// Host entry of the wgmma unit probe (tests/cuda/wgmma_probe.cu, built with CUDA only).
#pragma once
#include <cstdint>
#include <vector>

namespace rewy::test {

// D [64][N] = A [64][K] · B [N][K]ᵀ (twice: the second product accumulates, D = 2·A·Bᵀ) by one
// warpgroup through wg::gemm_tn, on the current device. A and B hold bf16 bit patterns.
// N in {16, 32, 64, 128}, K in {64, 128}.
std::vector<float> wgmma_tn(int N, int K, const std::vector<uint16_t>& A, const std::vector<uint16_t>& B, bool twice);

}  // namespace rewy::test
