// Differentiable data movement: permute/transpose into a contiguous tensor, dtype casts, and
// strided copies. Built on copy_cast (engine/copy.h), so every device and dtype pair works and
// the input may be any strided view. Every backward writes its gradient (=).
#pragma once
#include <vector>

#include "engine/tensor.h"

namespace rewy {

// out = in.permute(dims), materialised: out has shape in.shape[dims[i]], contiguous.
// The backward is the inverse permutation: din = dout.permute(inverse(dims)).
void permute_forward(Tensor& out, const Tensor& in, const std::vector<int>& dims, const Stream* s = nullptr);
void permute_backward(Tensor& din, const Tensor& dout, const std::vector<int>& dims, const Stream* s = nullptr);
std::vector<int> inverse_permutation(const std::vector<int>& dims);

// out = in.transpose(d0, d1), materialised; its own inverse.
void transpose_forward(Tensor& out, const Tensor& in, int d0, int d1, const Stream* s = nullptr);
void transpose_backward(Tensor& din, const Tensor& dout, int d0, int d1, const Stream* s = nullptr);

// out = cast(in) to out's dtype (bf16 <-> f32 <-> f64, round to nearest even). The backward
// casts back: din (in's dtype) = cast(dout).
void cast_forward(Tensor& out, const Tensor& in, const Stream* s = nullptr);
void cast_backward(Tensor& din, const Tensor& dout, const Stream* s = nullptr);

// out = in, where either side may be a strided view (gather a slice, scatter into one).
// The backward copies dout back into din (a view of the forward's source, typically).
void copy_forward(Tensor& out, const Tensor& in, const Stream* s = nullptr);
void copy_backward(Tensor& din, const Tensor& dout, const Stream* s = nullptr);

// Convenience wrappers that allocate the contiguous result.
Tensor permute(const Tensor& in, const std::vector<int>& dims, const Stream* s = nullptr);
Tensor transpose(const Tensor& in, int d0, int d1, const Stream* s = nullptr);
Tensor cast(const Tensor& in, DType dt, const Stream* s = nullptr);

}  // namespace rewy
