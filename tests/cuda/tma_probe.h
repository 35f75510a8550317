// Host entry of the TMA unit probe (tests/cuda/tma_probe.cu, built with CUDA only).
#pragma once
#include "engine/device.h"
#include "engine/tensor.h"

namespace rewy::test {

// X [rows][H][128] bf16 on the GPU. Loads the 64-token tile of head h starting at token t0 with
// TMA (two 64-channel boxes, 128-byte swizzle) and reads it back through wg::tile_offset into
// tile [64][128] bf16, on stream s.
void tma_tile(const Tensor& X, int h, int t0, Tensor& tile, const Stream& s);

// P [64][64] f32 = Q_tile · K_tileᵀ over the 128 channels: both tiles of head h at token t0
// loaded by TMA and multiplied by one warpgroup (wg::gemm_tn), as the chunk kernels will.
void tma_qk(const Tensor& Q, const Tensor& K, int h, int t0, Tensor& P, const Stream& s);

}  // namespace rewy::test
