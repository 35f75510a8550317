// Matrix products: C = alpha·op(A)·op(B) + beta·C, with op() a transpose chosen by flag.
//   2-D      A [M, K] ([K, M] if trans_a), B [K, N] ([N, K] if trans_b), C [M, N]
//   batched  A [batch, ., .], B [batch, ., .], C [batch, M, N]; A or B may stay 2-D and is then
//            shared by every batch (x·W with a weight W).
// Each matrix needs unit stride along its last dim; its rows may be padded (a slice of a wider
// matrix) and its batches strided. Dtypes: A and B alike; C alike, or f32 when A and B are bf16.
// CPU: OpenBLAS sgemm/dgemm (bf16 converted to f32). CUDA: cuBLASLt, bf16 or f32 inputs, fp32
// compute without TF32, on the stream's own workspace; f64 through a plain (slow) kernel.
// C is not read when beta == 0.
#pragma once
#include "engine/tensor.h"

namespace rewy {

void matmul_forward(Tensor& C, const Tensor& A, const Tensor& B, bool trans_a = false, bool trans_b = false,
                    double alpha = 1.0, double beta = 0.0, const Stream* s = nullptr);

// Gradients of C = alpha·op(A)·op(B) (the beta·C term's gradient, beta·dC, is the caller's):
//   dA (=) A's shape; dB (=, or += with accumulate_db: a weight's grad) B's shape.
// Either may be undefined to skip it. A shared 2-D operand gets the sum over the batch. dA and
// dB may be f32 when dC, A, B are bf16 (the rule of matmul_forward).
void matmul_backward(Tensor& dA, Tensor& dB, const Tensor& dC, const Tensor& A, const Tensor& B,
                     bool trans_a = false, bool trans_b = false, double alpha = 1.0, bool accumulate_db = false,
                     const Stream* s = nullptr);

// Allocates C (A's dtype and device).
Tensor matmul(const Tensor& A, const Tensor& B, bool trans_a = false, bool trans_b = false,
              const Stream* s = nullptr);

}  // namespace rewy
