// Host entry of the TMA unit probe (tests/cuda/tma_probe.cu, built with CUDA only).
#pragma once
#include <cstdint>
#include <vector>

namespace rewy::test {

// X [rows][H][128] bf16 bits. Loads the 64-token tile of head h starting at token t0 with TMA
// (two 64-channel boxes, 128-byte swizzle) and reads it back through wg::tile_offset: [64][128].
std::vector<uint16_t> tma_tile(const std::vector<uint16_t>& X, int64_t rows, int64_t H, int h, int t0);

// P [64][64] = Q_tile · K_tileᵀ over the 128 channels: both tiles of head h at token t0 loaded by
// TMA and multiplied by one warpgroup (wg::gemm_tn), as the chunk kernels will.
std::vector<float> tma_qk(const std::vector<uint16_t>& Q, const std::vector<uint16_t>& K, int64_t rows, int64_t H,
                          int h, int t0);

}  // namespace rewy::test
