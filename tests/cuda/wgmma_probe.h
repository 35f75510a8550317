// Host entry of the wgmma unit probe (tests/cuda/wgmma_probe.cu, built with CUDA only).
#pragma once
#include <cstdint>
#include <vector>

namespace rewy::test {

// D [64][N] = A [64][K] · B [N][K]ᵀ (twice: the second product accumulates, D = 2·A·Bᵀ) by one
// warpgroup through wg::gemm on the current device, with A stored K-major ([64][K]) or MN-major
// ([K][64], a_mn) and B K-major ([N][K]) or MN-major ([K][N], b_mn) in shared memory. A and B
// hold bf16 bit patterns. N in {16, 32, 64, 128} (64, 128 with b_mn), K in {64, 128}.
std::vector<float> wgmma(int N, int K, bool a_mn, bool b_mn, const std::vector<uint16_t>& A,
                         const std::vector<uint16_t>& B, bool twice);

}  // namespace rewy::test
