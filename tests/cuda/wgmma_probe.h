// Host entry of the wgmma unit probe (tests/cuda/wgmma_probe.cu, built with CUDA only).
#pragma once
#include "engine/device.h"
#include "engine/tensor.h"

namespace rewy::test {

// D [64][N] f32 = A [64][K] · B [N][K]ᵀ (twice: D = 2·A·Bᵀ, the second product accumulating) by
// one warpgroup through wg::gemm on stream s, with A laid out K-major ([64][K]) or MN-major
// ([K][64], a_mn) and B K-major ([N][K]) or MN-major ([K][N], b_mn) in shared memory. A, B:
// contiguous bf16 on the GPU; N in {16, 32, 64, 128} (64, 128 with b_mn), K in {64, 128}.
void wgmma(const Tensor& A, const Tensor& B, Tensor& D, bool a_mn, bool b_mn, bool twice, const Stream& s);

}  // namespace rewy::test
