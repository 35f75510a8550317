// Reductions on CPU: forward vs f64 sums written here, backward vs finite differences, and the
// shape rules of the last-dim and all-element forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "engine/gradcheck.h"
#include "engine/ops/reduce.h"
#include "test_engine_util.h"

using namespace rewy;
using namespace rewy::test;

namespace {

const DType kDtypes[] = {DType::F64, DType::F32, DType::BF16};
const Shape kShapes[] = {{3, 5, 7}, {4, 1}, {1}, {2, 33}};

// The CPU sums in f64 and rounds once to the dtype (bf16: through f32): |err| <= (u + u32)|ref|
// plus the f64 summation error N·2^-53·Σ|x| (tiny, but ties the bound to the data).
::testing::AssertionResult close_sum(const Tensor& got, const std::vector<double>& ref,
                                     const std::vector<double>& abs_sum, DType dt, double n) {
  const std::vector<double> g = got.to_vector();
  for (size_t i = 0; i < ref.size(); ++i) {
    const double tol = (unit_roundoff(dt) + kU32) * std::abs(ref[i]) + n * unit_roundoff(DType::F64) * abs_sum[i];
    if (!(std::abs(g[i] - ref[i]) <= tol))
      return ::testing::AssertionFailure() << "element " << i << ": " << g[i] << " vs " << ref[i] << " (tol " << tol
                                           << ")";
  }
  return ::testing::AssertionSuccess();
}

TEST(EngineReduce, LastDimForwardMatchesF64) {
  REWY_TEST_SEED(seed);
  for (const Shape& shape : kShapes)
    for (DType dt : kDtypes) {
      SCOPED_TRACE(fmt::format("{} {}", shape_str(shape), dtype_name(dt)));
      const Tensor x = uniform(shape, dt, seed, 0);
      const std::vector<double> xv = x.to_vector();
      const int64_t n = shape.back(), rows = x.numel() / n;
      std::vector<double> sum(static_cast<size_t>(rows), 0.0), abs_sum(sum), mx(sum);
      std::vector<double> am(sum);
      for (int64_t r = 0; r < rows; ++r) {
        const auto row = xv.begin() + r * n;
        for (int64_t j = 0; j < n; ++j) sum[size_t(r)] += row[j], abs_sum[size_t(r)] += std::abs(row[j]);
        const auto it = std::max_element(row, row + n);  // the first max, as documented
        mx[size_t(r)] = *it;
        am[size_t(r)] = double(it - row);
      }
      const Shape out_shape(shape.begin(), shape.end() - 1);
      Tensor out = poisoned(out_shape, dt);
      sum_last_forward(out, x);
      EXPECT_TRUE(close_sum(out, sum, abs_sum, dt, double(n)));

      Shape keep = shape;
      keep.back() = 1;  // the keep-dim form is accepted too
      Tensor mean = poisoned(keep, dt);
      mean_last_forward(mean, x);
      std::vector<double> mref = sum, mabs = abs_sum;
      for (size_t r = 0; r < mref.size(); ++r) mref[r] /= double(n), mabs[r] /= double(n);
      EXPECT_TRUE(close_sum(mean, mref, mabs, dt, double(n)));

      Tensor m = poisoned(out_shape, dt), idx = Tensor::full(out_shape, -1, DType::I64);
      max_last_forward(m, idx, x);
      EXPECT_EQ(m.to_vector(), mx);  // a max is one of the inputs: exact
      EXPECT_EQ(idx.to_vector(), am);
    }
}

TEST(EngineReduce, AllForwardMatchesF64) {
  REWY_TEST_SEED(seed);
  for (DType dt : kDtypes) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = uniform({7, 11, 3}, dt, seed, 0);
    const std::vector<double> xv = x.to_vector();
    double sum = 0, abs_sum = 0;
    for (double v : xv) sum += v, abs_sum += std::abs(v);
    const double n = double(xv.size());
    Tensor s = poisoned({}, dt), m = poisoned({1}, dt);
    sum_all_forward(s, x);
    mean_all_forward(m, x);
    EXPECT_TRUE(close_sum(s, {sum}, {abs_sum}, dt, n));
    EXPECT_TRUE(close_sum(m, {sum / n}, {abs_sum / n}, dt, n));
  }
}

// Row values a permutation of a coarse grid plus noise: maxima are unique and 0.2 apart, far
// beyond the finite-difference steps.
Tensor separated(const Shape& shape, uint64_t seed) {
  const int64_t n = shape.back(), rows = shape_numel(shape) / n;
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> noise(0.0, 0.1);
  std::vector<double> v(size_t(rows * n));
  std::vector<int> perm(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), gen);
    for (int64_t j = 0; j < n; ++j) v[size_t(r * n + j)] = 0.3 * (perm[size_t(j)] - n / 2.0) + noise(gen);
  }
  return Tensor::from_vector(v, shape, DType::F64);
}

TEST(EngineReduce, BackwardMatchesFiniteDifferences) {
  REWY_TEST_SEED(seed);
  const Shape shape{3, 4, 6}, out_shape{3, 4};
  const Tensor x = separated(shape, seed);
  using Fwd = void (*)(Tensor&, const Tensor&, const Stream*);
  using Bwd = void (*)(Tensor&, const Tensor&, const Stream*);
  const struct {
    const char* name;
    Fwd fwd;
    Bwd bwd;
    Shape out;
  } cases[] = {{"sum_last", sum_last_forward, sum_last_backward, out_shape},
               {"mean_last", mean_last_forward, mean_last_backward, out_shape},
               {"sum_all", sum_all_forward, sum_all_backward, {}},
               {"mean_all", mean_all_forward, mean_all_backward, {1}}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const ForwardFn f = [&](const std::vector<Tensor>& in) {
      Tensor out = Tensor::empty(c.out, DType::F64);
      c.fwd(out, in[0], nullptr);
      return std::vector<Tensor>{out};
    };
    const DotLoss L = dot_loss(f, {x}, seed + 1);
    Tensor dx = poisoned(shape, DType::F64);
    c.bwd(dx, L.cotangents[0], nullptr);
    const GradcheckResult r = gradcheck(L.loss, {x}, {dx});
    EXPECT_LT(r.max_rel_error, 1e-6) << r.str();
  }
  {
    SCOPED_TRACE("max_last");
    const ForwardFn f = [&](const std::vector<Tensor>& in) {
      Tensor out = Tensor::empty(out_shape, DType::F64), idx = Tensor::empty(out_shape, DType::I64);
      max_last_forward(out, idx, in[0]);
      return std::vector<Tensor>{out};
    };
    const DotLoss L = dot_loss(f, {x}, seed + 2);
    Tensor out = Tensor::empty(out_shape, DType::F64), idx = Tensor::empty(out_shape, DType::I64);
    max_last_forward(out, idx, x);
    Tensor dx = poisoned(shape, DType::F64);
    max_last_backward(dx, L.cotangents[0], idx);
    const GradcheckResult r = gradcheck(L.loss, {x}, {dx});
    EXPECT_LT(r.max_rel_error, 1e-6) << r.str();
  }
}

// bf16/f32 backward: a broadcast (and for mean one division, one rounding) of dout.
TEST(EngineReduce, LowPrecisionBackwardMatchesF64) {
  REWY_TEST_SEED(seed);
  for (DType dt : {DType::F32, DType::BF16}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor g = uniform({5}, dt, seed, 0);
    const std::vector<double> gv = g.to_vector();
    Tensor d = poisoned({5, 9}, dt);
    mean_last_backward(d, g);
    std::vector<double> ref(45);
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = gv[i / 9] / 9;
    EXPECT_TRUE(all_close(d, ref, unit_roundoff(dt) + kU32, 0.0));
    sum_last_backward(d, g);
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = gv[i / 9];
    EXPECT_TRUE(all_close(d, ref, 0.0, 0.0));
    const Tensor g0 = g.slice(0, 0, 1);
    mean_all_backward(d, g0);
    for (double& v : ref) v = gv[0] / 45;
    EXPECT_TRUE(all_close(d, ref, unit_roundoff(dt) + kU32, 0.0));
  }
}

TEST(EngineReduce, BadShapesNameTheOp) {
  const Tensor x = Tensor::full({3, 4}, 1.0, DType::F32);
  Tensor wrong = Tensor::empty({4}, DType::F32);
  const std::string e = error_of([&] { sum_last_forward(wrong, x); });
  EXPECT_NE(e.find("sum_last_forward: out has shape [4], expected [3] or [3, 1]"), std::string::npos) << e;
  Tensor out = Tensor::empty({3}, DType::F32), idx32 = Tensor::empty({3}, DType::I32);
  EXPECT_NE(error_of([&] { max_last_forward(out, idx32, x); }).find("argmax"), std::string::npos);
  const Tensor empty_rows = Tensor::empty({3, 0}, DType::F32);
  EXPECT_NE(error_of([&] { sum_last_forward(out, empty_rows); }).find("empty last dim"), std::string::npos);
  Tensor two = Tensor::empty({2}, DType::F32);
  EXPECT_NE(error_of([&] { mean_all_forward(two, x); }).find("expected one element"), std::string::npos);
  Tensor one = Tensor::empty({}, DType::F32);
  EXPECT_NE(error_of([&] { mean_all_forward(one, Tensor::empty({0}, DType::F32)); }).find("mean of the empty"),
            std::string::npos);
  sum_all_forward(one, Tensor::empty({0, 2}, DType::F32));  // an empty sum is 0
  EXPECT_EQ(one.item(), 0.0);
}

TEST(EngineReduce, ConvenienceWrappersDropTheDim) {
  const Tensor x = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(sum_last(x).to_vector(), (std::vector<double>{6, 15}));
  EXPECT_EQ(mean_last(x).shape(), (Shape{2}));
  EXPECT_EQ(sum_all(x).item(), 21.0);
  EXPECT_EQ(mean_all(x).item(), 3.5);
}

}  // namespace
