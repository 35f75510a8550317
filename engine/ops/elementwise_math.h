// Scalar formulas of the elementwise ops, shared by the CPU loops (engine/cpu/elementwise.cpp)
// and the CUDA kernels (engine/cuda/ops_elementwise.cu) so that the twins compute the same
// expressions. C++17, host and device. C is the compute type: float for bf16 and f32, double
// for f64.
#pragma once
#include <cmath>
#include <type_traits>

#include "engine/dtype.h"
#include "engine/ops/elementwise.h"

namespace rewy::ew {

template <typename T> struct compute { using type = T; };
template <> struct compute<bf16> { using type = float; };
template <typename T> using compute_t = typename compute<T>::type;

template <typename T> REWY_HD compute_t<T> load(T x) { return compute_t<T>(x); }
template <typename T> REWY_HD T store(compute_t<T> v) { return T(v); }

REWY_HD float m_exp(float x) { return expf(x); }
REWY_HD double m_exp(double x) { return exp(x); }
REWY_HD float m_log(float x) { return logf(x); }
REWY_HD double m_log(double x) { return log(x); }
REWY_HD float m_log1p(float x) { return log1pf(x); }
REWY_HD double m_log1p(double x) { return log1p(x); }
REWY_HD float m_tanh(float x) { return tanhf(x); }
REWY_HD double m_tanh(double x) { return tanh(x); }
REWY_HD float m_sqrt(float x) { return sqrtf(x); }
REWY_HD double m_sqrt(double x) { return sqrt(x); }

// σ(x) without overflow: e^-|x| never exceeds 1.
template <typename C> REWY_HD C sigmoid(C x) {
  const C e = m_exp(x >= C(0) ? -x : x);
  return x >= C(0) ? C(1) / (C(1) + e) : e / (C(1) + e);
}
// ln(1 + e^-|x|), the smooth part of softplus and logsigmoid.
template <typename C> REWY_HD C log1p_exp_neg_abs(C x) { return m_log1p(m_exp(x >= C(0) ? -x : x)); }

template <Unary OP, typename C> REWY_HD C unary_fwd(C x) {
  if constexpr (OP == Unary::Exp) return m_exp(x);
  else if constexpr (OP == Unary::Log) return m_log(x);
  else if constexpr (OP == Unary::Sigmoid) return sigmoid(x);
  else if constexpr (OP == Unary::Silu) return x * sigmoid(x);
  else if constexpr (OP == Unary::Softplus) return (x > C(0) ? x : C(0)) + log1p_exp_neg_abs(x);
  else if constexpr (OP == Unary::LogSigmoid) return (x < C(0) ? x : C(0)) - log1p_exp_neg_abs(x);
  else if constexpr (OP == Unary::Tanh) return m_tanh(x);
  else if constexpr (OP == Unary::Square) return x * x;
  else if constexpr (OP == Unary::Sqrt) return m_sqrt(x);
  else return C(1) / m_sqrt(x);  // Rsqrt
}

// dx from dy and whichever of x, y the op reads (unary_backward_reads_x/_y).
template <Unary OP, typename C> REWY_HD C unary_bwd(C dy, C x, C y) {
  if constexpr (OP == Unary::Exp) return dy * y;
  else if constexpr (OP == Unary::Log) return dy / x;
  else if constexpr (OP == Unary::Sigmoid) return dy * y * (C(1) - y);
  else if constexpr (OP == Unary::Silu) {
    const C s = sigmoid(x);
    return dy * s * (C(1) + x * (C(1) - s));
  } else if constexpr (OP == Unary::Softplus) return dy * sigmoid(x);
  else if constexpr (OP == Unary::LogSigmoid) return dy * sigmoid(-x);
  else if constexpr (OP == Unary::Tanh) return dy * (C(1) - y * y);
  else if constexpr (OP == Unary::Square) return C(2) * x * dy;
  else if constexpr (OP == Unary::Sqrt) return C(0.5) * dy / y;
  else return C(-0.5) * dy * y * y * y;  // Rsqrt
}

template <Binary OP, typename C> REWY_HD C binary_fwd(C a, C b) {
  if constexpr (OP == Binary::Add) return a + b;
  else if constexpr (OP == Binary::Sub) return a - b;
  else return a * b;
}
// The term db sums: dout·∂out/∂b.
template <Binary OP, typename C> REWY_HD C binary_db_term(C dout, C a) {
  if constexpr (OP == Binary::Add) return dout;
  else if constexpr (OP == Binary::Sub) return -dout;
  else return dout * a;
}

// f(std::integral_constant<Unary, op>{}): turns the runtime op into a template argument.
template <typename F> void dispatch_unary(Unary op, F&& f) {
  switch (op) {
    case Unary::Exp: return f(std::integral_constant<Unary, Unary::Exp>{});
    case Unary::Log: return f(std::integral_constant<Unary, Unary::Log>{});
    case Unary::Sigmoid: return f(std::integral_constant<Unary, Unary::Sigmoid>{});
    case Unary::Silu: return f(std::integral_constant<Unary, Unary::Silu>{});
    case Unary::Softplus: return f(std::integral_constant<Unary, Unary::Softplus>{});
    case Unary::LogSigmoid: return f(std::integral_constant<Unary, Unary::LogSigmoid>{});
    case Unary::Tanh: return f(std::integral_constant<Unary, Unary::Tanh>{});
    case Unary::Square: return f(std::integral_constant<Unary, Unary::Square>{});
    case Unary::Sqrt: return f(std::integral_constant<Unary, Unary::Sqrt>{});
    case Unary::Rsqrt: return f(std::integral_constant<Unary, Unary::Rsqrt>{});
  }
}

template <typename F> void dispatch_binary(Binary op, F&& f) {
  switch (op) {
    case Binary::Add: return f(std::integral_constant<Binary, Binary::Add>{});
    case Binary::Sub: return f(std::integral_constant<Binary, Binary::Sub>{});
    case Binary::Mul: return f(std::integral_constant<Binary, Binary::Mul>{});
  }
}

}  // namespace rewy::ew
