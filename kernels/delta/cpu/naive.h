// The oracle: the token-by-token recurrence of §1 in f64, and its backward written out by hand,
// step by step in reverse. Quadratic in nothing, but it keeps every state S_t of a sequence.
// Inputs f32 or f64 (read as f64); outputs in the input dtype.
#pragma once
#include "kernels/delta/delta.h"

namespace rewy::delta::cpu {

// o [B, T, H, V], ht [N, H, K, V]; saves nothing (the backward replays the recurrence).
ForwardResult naive_forward(const Config& cfg, const Inputs& in, const Dims& dims);
// Writes (=) every gradient; dht may be undefined (then ∂S_L = 0).
Grads naive_backward(const Config& cfg, const Inputs& in, const Dims& dims, const Tensor& dout, const Tensor& dht);

}  // namespace rewy::delta::cpu
