// Reductions over the last dim and over all elements, with their backward (broadcast back).
// Inputs are contiguous floating tensors; outputs have the input's dtype (bf16 is accumulated
// in f32 on the GPU; the CPU accumulates every dtype in f64, which makes it the more accurate
// twin). Every backward writes its gradient (=): they are activation grads.
//
// Last-dim ops map in [..., N] to out [...] (or [..., 1]); N must be at least 1.
#pragma once
#include "engine/tensor.h"

namespace rewy {

void sum_last_forward(Tensor& out, const Tensor& in, const Stream* s = nullptr);     // out[r] = Σ_j in[r, j]
void sum_last_backward(Tensor& din, const Tensor& dout, const Stream* s = nullptr);  // din[r, j] = dout[r]

void mean_last_forward(Tensor& out, const Tensor& in, const Stream* s = nullptr);     // out[r] = Σ_j in[r, j] / N
void mean_last_backward(Tensor& din, const Tensor& dout, const Stream* s = nullptr);  // din[r, j] = dout[r] / N

// out[r] = max_j in[r, j]; argmax [...] i64: the first index holding the max, which is all the
// backward needs: din[r, j] = dout[r] if j == argmax[r], else 0.
void max_last_forward(Tensor& out, Tensor& argmax, const Tensor& in, const Stream* s = nullptr);
void max_last_backward(Tensor& din, const Tensor& dout, const Tensor& argmax, const Stream* s = nullptr);

// Over all elements: out has one element (shape [] or [1]); din has the forward input's shape.
void sum_all_forward(Tensor& out, const Tensor& in, const Stream* s = nullptr);
void sum_all_backward(Tensor& din, const Tensor& dout, const Stream* s = nullptr);   // din[i] = dout
void mean_all_forward(Tensor& out, const Tensor& in, const Stream* s = nullptr);     // in must be non-empty
void mean_all_backward(Tensor& din, const Tensor& dout, const Stream* s = nullptr);  // din[i] = dout / n

// Convenience wrappers that allocate the result (shape [...] for last-dim, [] for all).
Tensor sum_last(const Tensor& in, const Stream* s = nullptr);
Tensor mean_last(const Tensor& in, const Stream* s = nullptr);
Tensor sum_all(const Tensor& in, const Stream* s = nullptr);
Tensor mean_all(const Tensor& in, const Stream* s = nullptr);

}  // namespace rewy
