// The gradient checker itself: it accepts a right gradient, rejects a slightly wrong one, and
// its dot-product loss is what it claims.
#include <gtest/gtest.h>

#include "engine/gradcheck.h"
#include "test_engine_util.h"

using namespace rewy;
using namespace rewy::test;

namespace {

// f(x, y) = [sin(x_i)·y_i², Σ x_i³] written out by hand, and its exact vector-Jacobian product.
std::vector<Tensor> f(const std::vector<Tensor>& in) {
  const std::vector<double> x = in[0].to_vector(), y = in[1].to_vector();
  std::vector<double> a(x.size());
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) a[i] = std::sin(x[i]) * y[i] * y[i], s += x[i] * x[i] * x[i];
  return {Tensor::from_vector(a, in[0].shape()), Tensor::from_vector({s}, {1})};
}

std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>& cot) {
  const std::vector<double> x = in[0].to_vector(), y = in[1].to_vector(), ca = cot[0].to_vector();
  const double cs = cot[1].item();
  std::vector<double> dx(x.size()), dy(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    dx[i] = ca[i] * std::cos(x[i]) * y[i] * y[i] + cs * 3 * x[i] * x[i];
    dy[i] = ca[i] * std::sin(x[i]) * 2 * y[i];
  }
  return {Tensor::from_vector(dx, in[0].shape()), Tensor::from_vector(dy, in[1].shape())};
}

TEST(EngineGradcheck, AcceptsTheRightGradientTightly) {
  REWY_TEST_SEED(seed);
  const Tensor x = uniform({4, 5}, DType::F64, seed, 0, -3, 3), y = uniform({4, 5}, DType::F64, seed, 1, -3, 3);
  const DotLoss L = dot_loss(f, {x, y}, seed + 1);
  const std::vector<Tensor> g = vjp({x, y}, L.cotangents);
  const GradcheckResult r = gradcheck(L.loss, {x, y}, g);
  // ~1e-10 typical (gradcheck.h); two orders below the 1e-6 threshold the op tests use.
  EXPECT_LT(r.max_rel_error, 1e-8) << r.str();
  EXPECT_EQ(r.checked, 40);
  // The inputs are restored exactly.
  EXPECT_EQ(x.to_vector(), uniform({4, 5}, DType::F64, seed, 0, -3, 3).to_vector());
}

TEST(EngineGradcheck, RejectsAGradientOffByATenthOfAPercent) {
  REWY_TEST_SEED(seed);
  const Tensor x = uniform({4, 5}, DType::F64, seed, 0, -3, 3), y = uniform({4, 5}, DType::F64, seed, 1, -3, 3);
  const DotLoss L = dot_loss(f, {x, y}, seed + 1);
  std::vector<Tensor> g = vjp({x, y}, L.cotangents);
  const int64_t k = 7;
  g[1].data<double>()[k] += 1e-3 * std::max(std::abs(g[1].data<double>()[k]), 1.0);
  const GradcheckResult r = gradcheck(L.loss, {x, y}, g);
  EXPECT_GT(r.max_rel_error, 1e-6) << r.str();
  EXPECT_EQ(r.input, 1u);
  EXPECT_EQ(r.index, k);
  g[0].data<double>()[0] = NAN;
  EXPECT_EQ(gradcheck(L.loss, {x, y}, g).max_rel_error, INFINITY);
}

TEST(EngineGradcheck, DotLossIsTheCotangentProduct) {
  REWY_TEST_SEED(seed);
  const Tensor x = uniform({3}, DType::F64, seed, 0), y = uniform({3}, DType::F64, seed, 1);
  const DotLoss L = dot_loss(f, {x, y}, seed + 1);
  ASSERT_EQ(L.cotangents.size(), 2u);
  EXPECT_EQ(L.cotangents[1].shape(), (Shape{1}));
  const std::vector<Tensor> out = f({x, y});
  const std::vector<double> a = out[0].to_vector(), ca = L.cotangents[0].to_vector();
  double want = out[1].item() * L.cotangents[1].item();
  for (size_t i = 0; i < a.size(); ++i) want += a[i] * ca[i];
  EXPECT_NEAR(L.loss({x, y}), want, 1e-14 * (1 + std::abs(want)));
  EXPECT_EQ(dot_loss(f, {x, y}, seed + 1).cotangents[0].to_vector(), ca);  // the seed fixes them
}

TEST(EngineGradcheck, SkipsUndefinedGradsAndChecksItsInputs) {
  REWY_TEST_SEED(seed);
  const Tensor x = uniform({2, 2}, DType::F64, seed, 0), y = uniform({2, 2}, DType::F64, seed, 1);
  const DotLoss L = dot_loss(f, {x, y}, seed + 1);
  const std::vector<Tensor> g = vjp({x, y}, L.cotangents);
  const GradcheckResult r = gradcheck(L.loss, {x, y}, {Tensor{}, g[1]});
  EXPECT_EQ(r.checked, 4);
  EXPECT_LT(r.max_rel_error, 1e-8) << r.str();
  EXPECT_NE(error_of([&] { gradcheck(L.loss, {x, y}, {g[0]}); }).find("2 inputs but 1 analytic grads"),
            std::string::npos);
  const Tensor x32 = x.to(DType::F32);
  EXPECT_NE(error_of([&] { gradcheck(L.loss, {x32, y}, g); }).find("must be contiguous CPU f64"), std::string::npos);
}

}  // namespace
