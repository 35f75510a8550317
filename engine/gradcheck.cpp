#include "engine/gradcheck.h"

#include <cmath>
#include <algorithm>

#include "engine/ops/random.h"

namespace rewy {

std::string GradcheckResult::str() const {
  return fmt::format("max relative error {:.3e} over {} elements, at input {} element {}: analytic {:.10g}, "
                     "numeric {:.10g}",
                     max_rel_error, checked, input, index, analytic, numeric);
}

GradcheckResult gradcheck(const LossFn& loss, const std::vector<Tensor>& inputs,
                          const std::vector<Tensor>& analytic_grads, const GradcheckOptions& opt) {
  REWY_CHECK(analytic_grads.size() == inputs.size(), "gradcheck: {} inputs but {} analytic grads", inputs.size(),
             analytic_grads.size());
  std::vector<std::vector<double>> analytic(inputs.size()), numeric(inputs.size());
  double scale = 0.0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!analytic_grads[k].defined()) continue;
    const Tensor& x = inputs[k];
    REWY_CHECK(x.defined() && x.device().is_cpu() && x.dtype() == DType::F64 && x.is_contiguous(),
               "gradcheck: input {} is {}; inputs must be contiguous CPU f64 tensors", k, x.str());
    check_shape(analytic_grads[k], x.shape(), "gradcheck: analytic grad");
    analytic[k] = analytic_grads[k].to_vector();
    double* p = x.data<double>();
    numeric[k].resize(size_t(x.numel()));
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double x0 = p[i], h = opt.eps * std::max(1.0, std::abs(x0));
      const auto at = [&](double v) {
        p[i] = v;
        return loss(inputs);
      };
      const double l1 = at(x0 + h) - at(x0 - h), l2 = at(x0 + 2 * h) - at(x0 - 2 * h);
      p[i] = x0;
      numeric[k][size_t(i)] = (8 * l1 - l2) / (12 * h);
      scale = std::max(scale, std::abs(numeric[k][size_t(i)]));
    }
  }
  const double floor = std::max(opt.rel_floor * scale, 1e-300);
  GradcheckResult r;
  for (size_t k = 0; k < inputs.size(); ++k) {
    for (size_t i = 0; i < numeric[k].size(); ++i) {
      const double a = analytic[k][i], n = numeric[k][i];
      const double err = std::abs(a - n) / std::max({std::abs(a), std::abs(n), floor});
      r.checked++;
      if (!(err <= r.max_rel_error)) {  // NaN counts as the worst
        r.max_rel_error = std::isnan(err) ? INFINITY : err;
        r.input = k;
        r.index = int64_t(i);
        r.analytic = a;
        r.numeric = n;
      }
    }
  }
  return r;
}

DotLoss dot_loss(const ForwardFn& forward, const std::vector<Tensor>& inputs, uint64_t seed) {
  const std::vector<Tensor> outputs = forward(inputs);
  DotLoss d;
  for (size_t k = 0; k < outputs.size(); ++k) {
    Tensor c = Tensor::empty(outputs[k].shape(), DType::F64);
    fill_normal(c, seed, /*offset=*/k);
    d.cotangents.push_back(c);
  }
  std::vector<std::vector<double>> cot;
  for (const Tensor& c : d.cotangents) cot.push_back(c.to_vector());
  d.loss = [forward, cot](const std::vector<Tensor>& x) {
    const std::vector<Tensor> out = forward(x);
    REWY_CHECK(out.size() == cot.size(), "dot_loss: forward returned {} outputs, then {}", cot.size(), out.size());
    // Neumaier summation: terms that the perturbation left alone cancel exactly between the
    // two evaluations, so the difference carries only the rounding of the terms it changed.
    double sum = 0.0, carry = 0.0;
    for (size_t k = 0; k < out.size(); ++k) {
      const std::vector<double> y = out[k].to_vector();
      REWY_CHECK(y.size() == cot[k].size(), "dot_loss: output {} changed size", k);
      for (size_t i = 0; i < y.size(); ++i) {
        const double t = cot[k][i] * y[i], s2 = sum + t;
        carry += std::abs(sum) >= std::abs(t) ? (sum - s2) + t : (t - s2) + sum;
        sum = s2;
      }
    }
    sum += carry;
    return sum;
  };
  return d;
}

}  // namespace rewy
