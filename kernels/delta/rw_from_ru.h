// Where the ReWY CUDA kernels form R_W = 𝒯ᵀ∂W as −R_U Hᵀ from the bf16 R_U (∂W is never formed),
// so the bf16 twin (chunk.cpp) rounds the same way: DeltaNet's and GDN's grad_chunk at every head
// size (on warpgroups) and KDA's at K = V = 128 (warp products). One rule for both sides: the CUDA
// launch checks its default kernels against it at compile time (launch_impl.cuh).
#pragma once
#include "kernels/delta/delta.h"

namespace rewy::delta {

constexpr bool rewy_rw_from_ru(Variant v, int K, int V) {
  return v == Variant::DeltaNet || v == Variant::GDN || (v == Variant::KDA && K == 128 && V == 128);
}

}  // namespace rewy::delta
