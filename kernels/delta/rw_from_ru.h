// Rules shared by the CUDA kernels and the bf16 twin (chunk.cpp); the CUDA launch checks its
// default kernels against the first two at compile time (launch_impl.cuh); the third is an option's
// (Config::dk_state_term), which delta_cuda.cu's backward and the twin both read.
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

// Where the ReWY CUDA kernels form ∂A = −stril(R_U Eᵀ) from the bf16 R_U and E (the E-system: W and
// U enter the backward only through E = U − WH, so R_W Wᵀ + R_U Uᵀ = R_U Eᵀ), so the bf16 twin forms
// it the same way: every variant's grad_chunk at K = V = 128.
constexpr bool rewy_da_from_e(Variant, int K, int V) { return K == 128 && V == 128; }

// Where Config::dk_state_term applies (with the ReWY backward; on CUDA also the Recompute policy,
// state_bwd at whole-V slices and grad_chunk at 16 warps): state_bwd forms ∂K̄'s state term
// s E (bf16(∂H⁺/s))ᵀ and stores it as bf16, so the bf16 twin rounds it the same way.
constexpr bool rewy_dk_state_term(Variant v, int K, int V) { return v == Variant::DeltaNet && K == 128 && V == 128; }

}  // namespace rewy::delta
