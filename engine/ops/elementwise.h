// Elementwise ops: unary functions, binary add/sub/mul with row broadcast, scale and axpby.
// Forward and backward side by side. Every tensor is contiguous and floating (f32, bf16, f64),
// all of one dtype and one device; bf16 is computed in f32. Outputs are preallocated by the
// caller and may alias an input of the same shape (in-place is fine: each element is read
// before it is written). Gradient convention: activation grads are written (=); the one
// exception is a broadcast parameter's grad (bias, norm weight), which accumulates (+=) when
// asked to with `accumulate_db`.
#pragma once
#include "engine/tensor.h"

namespace rewy {

// ---------------------------------------------------------------------------------------------
// Unary: y = f(x). The backward reads x, y or both (unary_backward_reads_x/_y say which); the
// other may be left undefined.
//   exp       y = e^x                dx = dy·y
//   log       y = ln x               dx = dy/x
//   sigmoid   y = 1/(1+e^-x)         dx = dy·y(1-y)
//   silu      y = x·σ(x)             dx = dy·σ(x)(1 + x(1-σ(x)))
//   softplus  y = ln(1+e^x)          dx = dy·σ(x)
//   logsigmoid y = -ln(1+e^-x)       dx = dy·σ(-x)
//   tanh      y = tanh x             dx = dy·(1-y²)
//   square    y = x²                 dx = 2x·dy
//   sqrt      y = √x                 dx = dy/(2y)
//   rsqrt     y = 1/√x               dx = -dy·y³/2
enum class Unary : uint8_t { Exp, Log, Sigmoid, Silu, Softplus, LogSigmoid, Tanh, Square, Sqrt, Rsqrt };
constexpr Unary kAllUnary[] = {Unary::Exp,        Unary::Log,  Unary::Sigmoid, Unary::Silu, Unary::Softplus,
                               Unary::LogSigmoid, Unary::Tanh, Unary::Square,  Unary::Sqrt, Unary::Rsqrt};
const char* unary_name(Unary op);
bool unary_backward_reads_x(Unary op);
bool unary_backward_reads_y(Unary op);

void unary_forward(Unary op, Tensor& y, const Tensor& x, const Stream* s = nullptr);  // y, x [*]
// dx (=) [*]; dy [*]; x, y [*] as the forward saw and produced them.
void unary_backward(Unary op, Tensor& dx, const Tensor& dy, const Tensor& x, const Tensor& y,
                    const Stream* s = nullptr);
Tensor unary(Unary op, const Tensor& x, const Stream* s = nullptr);

// ---------------------------------------------------------------------------------------------
// Binary: out = a ∘ b. b has a's shape, or a trailing part of it ([N] or [T, N] for a [B, T, N]):
// then b repeats over a's leading dims (bias add, norm weight) and db sums over them.
//   add  out = a + b   da = dout     db = Σ dout
//   sub  out = a - b   da = dout     db = -Σ dout
//   mul  out = a · b   da = dout·b   db = Σ dout·a
enum class Binary : uint8_t { Add, Sub, Mul };
constexpr Binary kAllBinary[] = {Binary::Add, Binary::Sub, Binary::Mul};
const char* binary_name(Binary op);

void binary_forward(Binary op, Tensor& out, const Tensor& a, const Tensor& b, const Stream* s = nullptr);
// da (=) [a's shape], db (= or += with accumulate_db) [b's shape]; either may be undefined to skip
// it. a and b are the forward's inputs (mul reads them; add and sub need neither).
void binary_backward(Binary op, Tensor& da, Tensor& db, const Tensor& dout, const Tensor& a, const Tensor& b,
                     bool accumulate_db = false, const Stream* s = nullptr);
Tensor binary(Binary op, const Tensor& a, const Tensor& b, const Stream* s = nullptr);

// ---------------------------------------------------------------------------------------------
// Scale: out = alpha·x. Backward: dx (=) alpha·dout.
void scale_forward(Tensor& out, const Tensor& x, double alpha, const Stream* s = nullptr);
void scale_backward(Tensor& dx, const Tensor& dout, double alpha, const Stream* s = nullptr);

// Accumulate: y = alpha·x + beta·y (y is not read when beta == 0, so it may hold garbage).
// This is how a gradient is added into a buffer: axpby(grad, 1, g, 1). Its backward is itself
// linear: dx = alpha·dy, dy_old = beta·dy (scale_backward twice).
void axpby(Tensor& y, double alpha, const Tensor& x, double beta, const Stream* s = nullptr);

}  // namespace rewy
