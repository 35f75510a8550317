// CUDA entry points of the delta-rule kernels (called by kernels/delta/delta.cpp when the inputs
// live on a GPU). Inputs: q, k, v, beta, b, w bf16; g f32; h0 f32; cu_seqlens i32 or i64.
// Outputs: o bf16, ht f32; gradients bf16 except dg and dh0 (f32).
#pragma once
#include "kernels/delta/delta.h"

namespace rewy::delta::cuda_impl {

ForwardResult forward(const Config& cfg, const Inputs& in, const Dims& dims);
Grads backward(const Config& cfg, const Inputs& in, const Dims& dims, const ForwardResult& fwd, const Tensor& dout,
               const Tensor& dht);
int64_t multicast_state_launches();
int64_t register_pass_launches();
int64_t one_kernel_forwards();
int64_t overlapped_backwards();
int64_t prep_beside_forwards();
int64_t unfused_forwards_keeping_tbeta();
int64_t fused_channel_forwards();
int64_t segment_scan_forwards();
int64_t two_pass_segment_forwards();
int64_t decay_cut_forwards();
int decay_cut_fell_back();
int64_t decay_cut_backwards();
int64_t dk_state_backwards();
int64_t row_beta_backwards();
int decay_cut_backward_fell_back();

}  // namespace rewy::delta::cuda_impl
