// Gradient checking: central finite differences in f64 on CPU, for any op or layer with a
// hand-written backward.
//
//   1. Write the forward as a function of its inputs (CPU f64 tensors) and wrap it with
//      dot_loss(): L(x) = Σ_k <c_k, f_k(x)> with random cotangents c_k.
//   2. Run the backward with the cotangents as output grads: that gives the analytic ∂L/∂x.
//   3. gradcheck(L, inputs, analytic) perturbs every input element by ±h and ±2h, h =
//      eps·max(1, |x|), and compares the fourth-order central difference
//      (8(L(x+h) - L(x-h)) - (L(x+2h) - L(x-2h))) / 12h with the analytic grad.
//
// The error of element i is |a_i - n_i| / max(|a_i|, |n_i|, floor), floor = rel_floor times the
// largest |n| over all inputs: relative for the grads that matter, absolute (scaled) for those
// near zero, whose finite difference is dominated by cancellation. With eps = 1e-4 in f64 the
// truncation error is O(eps^4) and the cancellation error O(1e-16·|y|/eps) (dot_loss sums
// exactly enough that only the outputs that moved count), so a correct backward scores ~1e-10
// and a wrong formula typically 1e-2 or more: a threshold of 1e-6 separates them. Keep inputs 2h away from
// kinks (max, ties) and domain edges (log, sqrt).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "engine/tensor.h"

namespace rewy {

using LossFn = std::function<double(const std::vector<Tensor>& inputs)>;
using ForwardFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

struct GradcheckOptions {
  double eps = 1e-4;        // relative step
  double rel_floor = 1e-3;  // denominator floor, relative to the largest numeric grad
};

struct GradcheckResult {
  double max_rel_error = 0.0;  // over every checked element
  // The worst element: input index, flat element index, and the two grads there.
  size_t input = 0;
  int64_t index = 0;
  double analytic = 0.0, numeric = 0.0;
  int64_t checked = 0;  // elements compared
  std::string str() const;
};

// inputs: contiguous CPU f64 tensors, perturbed in place and restored. analytic_grads[i] has
// inputs[i]'s shape (any dtype, any device), or is undefined to skip input i.
GradcheckResult gradcheck(const LossFn& loss, const std::vector<Tensor>& inputs,
                          const std::vector<Tensor>& analytic_grads, const GradcheckOptions& opt = {});

// L(x) = Σ_k <c_k, forward(x)_k>, with c_k drawn N(0, 1) in f64 (CPU) from `seed`, one per
// output of forward(inputs); pass the cotangents to the backward as the output grads.
struct DotLoss {
  LossFn loss;
  std::vector<Tensor> cotangents;
};
DotLoss dot_loss(const ForwardFn& forward, const std::vector<Tensor>& inputs, uint64_t seed);

}  // namespace rewy
