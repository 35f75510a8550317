// Elementwise ops on CPU: forward vs an f64 reference written here, f64 backward vs finite
// differences, f32/bf16 paths vs the f64 path.
#include <gtest/gtest.h>

#include "engine/gradcheck.h"
#include "engine/ops/elementwise.h"
#include "test_engine_util.h"

using namespace rewy;
using namespace rewy::test;

namespace {

const DType kDtypes[] = {DType::F64, DType::F32, DType::BF16};

// Each op with an input range inside its domain and an independent f64 formula.
struct UnaryCase {
  Unary op;
  double lo, hi;
  double (*ref)(double);
};
const UnaryCase kUnary[] = {
    {Unary::Exp, -4, 4, [](double x) { return std::exp(x); }},
    {Unary::Log, 0.1, 4, [](double x) { return std::log(x); }},
    {Unary::Sigmoid, -8, 8, [](double x) { return 1 / (1 + std::exp(-x)); }},
    {Unary::Silu, -8, 8, [](double x) { return x / (1 + std::exp(-x)); }},
    {Unary::Softplus, -8, 8, [](double x) { return std::log1p(std::exp(x)); }},
    {Unary::LogSigmoid, -8, 8, [](double x) { return -std::log1p(std::exp(-x)); }},
    {Unary::Tanh, -4, 4, [](double x) { return std::tanh(x); }},
    {Unary::Square, -3, 3, [](double x) { return x * x; }},
    {Unary::Sqrt, 0.1, 4, [](double x) { return std::sqrt(x); }},
    {Unary::Rsqrt, 0.1, 4, [](double x) { return 1 / std::sqrt(x); }},
};

// A formula of a handful of operations (each correctly rounded, libm functions within an ulp or
// two) on terms of magnitude max(1, |y|) errs by at most ~10 units of roundoff of the compute
// type; 32 leaves margin. bf16 adds one final rounding of its own roundoff.
double forward_rtol(DType dt) { return unit_roundoff(dt) + 32 * unit_roundoff(dt == DType::BF16 ? DType::F32 : dt); }
double forward_atol(DType dt) { return 32 * unit_roundoff(dt == DType::BF16 ? DType::F32 : dt); }

TEST(EngineUnary, ForwardMatchesF64Reference) {
  REWY_TEST_SEED(seed);
  for (const UnaryCase& c : kUnary)
    for (DType dt : kDtypes) {
      SCOPED_TRACE(fmt::format("{} {}", unary_name(c.op), dtype_name(dt)));
      const Tensor x = uniform({3, 41}, dt, seed, uint64_t(c.op), c.lo, c.hi);
      Tensor y = poisoned({3, 41}, dt);
      unary_forward(c.op, y, x);
      std::vector<double> ref = x.to_vector();
      for (double& v : ref) v = c.ref(v);
      EXPECT_TRUE(all_close(y, ref, forward_rtol(dt), forward_atol(dt)));
    }
}

TEST(EngineUnary, BackwardMatchesFiniteDifferences) {
  REWY_TEST_SEED(seed);
  for (const UnaryCase& c : kUnary) {
    SCOPED_TRACE(unary_name(c.op));
    const Tensor x = uniform({4, 9}, DType::F64, seed, uint64_t(c.op), c.lo, c.hi);
    const ForwardFn f = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{unary(c.op, in[0])}; };
    const DotLoss L = dot_loss(f, {x}, seed + 1);
    const Tensor y = unary(c.op, x);
    Tensor dx = poisoned(x.shape(), DType::F64);
    unary_backward(c.op, dx, L.cotangents[0], x, y);
    const GradcheckResult r = gradcheck(L.loss, {x}, {dx});
    EXPECT_LT(r.max_rel_error, 1e-6) << r.str();
  }
}

// f32/bf16 backward vs the f64 backward (checked above) on the same saved tensors, so only the
// backward's own rounding counts: as for the forward, with terms up to the largest |dx|.
TEST(EngineUnary, LowPrecisionBackwardMatchesF64) {
  REWY_TEST_SEED(seed);
  for (const UnaryCase& c : kUnary)
    for (DType dt : {DType::F32, DType::BF16}) {
      SCOPED_TRACE(fmt::format("{} {}", unary_name(c.op), dtype_name(dt)));
      const Tensor x = uniform({5, 13}, dt, seed, uint64_t(c.op), c.lo, c.hi);
      const Tensor dy = uniform({5, 13}, dt, seed, 100 + uint64_t(c.op));
      const Tensor y = unary(c.op, x);
      Tensor dx = poisoned(x.shape(), dt);
      unary_backward(c.op, dx, dy, x, y);
      const Tensor x64 = x.to(DType::F64), y64 = y.to(DType::F64), dy64 = dy.to(DType::F64);
      Tensor ref = Tensor::empty(x.shape(), DType::F64);
      unary_backward(c.op, ref, dy64, x64, y64);
      const std::vector<double> r = ref.to_vector();
      EXPECT_TRUE(all_close(dx, r, forward_rtol(dt), forward_atol(dt) * std::max(1.0, max_abs(r))));
    }
}

TEST(EngineUnary, BackwardNamesTheMissingSavedTensor) {
  const Tensor x = Tensor::full({2}, 0.5, DType::F32), dy = Tensor::full({2}, 1.0, DType::F32);
  Tensor dx = Tensor::empty({2}, DType::F32);
  EXPECT_NE(error_of([&] { unary_backward(Unary::Exp, dx, dy, x, Tensor{}); }).find("unary_backward(exp): needs y"),
            std::string::npos);
  EXPECT_NE(error_of([&] { unary_backward(Unary::Silu, dx, dy, Tensor{}, x); }).find("needs x"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
double binary_ref(Binary op, double a, double b) {
  return op == Binary::Add ? a + b : op == Binary::Sub ? a - b : a * b;
}

// b shapes: same as a, and the two trailing broadcasts.
const Shape kA = {3, 4, 5};
const Shape kBShapes[] = {{3, 4, 5}, {4, 5}, {5}};

// One correctly rounded operation on exact inputs: a single rounding to the dtype (bf16: to
// f32, then to bf16). The f64 reference itself is within 2^-53.
double binary_rtol(DType dt) { return unit_roundoff(dt) + 2 * kU32 + 4 * unit_roundoff(DType::F64); }

TEST(EngineBinary, ForwardMatchesF64Reference) {
  REWY_TEST_SEED(seed);
  for (Binary op : kAllBinary)
    for (const Shape& bs : kBShapes)
      for (DType dt : kDtypes) {
        SCOPED_TRACE(fmt::format("{} b{} {}", binary_name(op), shape_str(bs), dtype_name(dt)));
        const Tensor a = uniform(kA, dt, seed, 0), b = uniform(bs, dt, seed, 1);
        Tensor out = poisoned(kA, dt);
        binary_forward(op, out, a, b);
        const std::vector<double> av = a.to_vector(), bv = b.to_vector();
        std::vector<double> ref(av.size());
        for (size_t i = 0; i < av.size(); ++i) ref[i] = binary_ref(op, av[i], bv[i % bv.size()]);
        EXPECT_TRUE(all_close(out, ref, binary_rtol(dt), 0.0));
      }
}

TEST(EngineBinary, BackwardMatchesFiniteDifferences) {
  REWY_TEST_SEED(seed);
  for (Binary op : kAllBinary)
    for (const Shape& bs : kBShapes) {
      SCOPED_TRACE(fmt::format("{} b{}", binary_name(op), shape_str(bs)));
      const Tensor a = uniform(kA, DType::F64, seed, 0), b = uniform(bs, DType::F64, seed, 1);
      const ForwardFn f = [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{binary(op, in[0], in[1])};
      };
      const DotLoss L = dot_loss(f, {a, b}, seed + 1);
      Tensor da = poisoned(kA, DType::F64), db = poisoned(bs, DType::F64);
      binary_backward(op, da, db, L.cotangents[0], a, b);
      const GradcheckResult r = gradcheck(L.loss, {a, b}, {da, db});
      EXPECT_LT(r.max_rel_error, 1e-6) << r.str();

      // accumulate_db adds onto what db holds (a parameter's grad).
      const Tensor db0 = uniform(bs, DType::F64, seed, 2);
      Tensor db_acc = db0.clone(), none;
      binary_backward(op, none, db_acc, L.cotangents[0], a, b, /*accumulate_db=*/true);
      std::vector<double> want = db0.to_vector();
      const std::vector<double> g = db.to_vector();
      for (size_t i = 0; i < want.size(); ++i) want[i] += g[i];
      EXPECT_TRUE(all_close(db_acc, want, 4 * unit_roundoff(DType::F64), 1e-14));
    }
}

// bf16/f32 grads vs the f64 backward on the same inputs: da is one product (one rounding), db
// a sum accumulated in f64 and rounded once.
TEST(EngineBinary, LowPrecisionBackwardMatchesF64) {
  REWY_TEST_SEED(seed);
  for (Binary op : kAllBinary)
    for (const Shape& bs : kBShapes)
      for (DType dt : {DType::F32, DType::BF16}) {
        SCOPED_TRACE(fmt::format("{} b{} {}", binary_name(op), shape_str(bs), dtype_name(dt)));
        const Tensor a = uniform(kA, dt, seed, 0), b = uniform(bs, dt, seed, 1), g = uniform(kA, dt, seed, 2);
        Tensor da = poisoned(kA, dt), db = poisoned(bs, dt);
        binary_backward(op, da, db, g, a, b);
        Tensor da64 = Tensor::empty(kA, DType::F64), db64 = Tensor::empty(bs, DType::F64);
        binary_backward(op, da64, db64, g.to(DType::F64), a.to(DType::F64), b.to(DType::F64));
        EXPECT_TRUE(all_close(da, da64.to_vector(), binary_rtol(dt), 0.0));
        EXPECT_TRUE(all_close(db, db64.to_vector(), binary_rtol(dt), 0.0));
      }
}

TEST(EngineBinary, ShapeMismatchNamesOpAndShapes) {
  const Tensor a = Tensor::full({2, 4}, 1.0, DType::F32), b = Tensor::full({3}, 1.0, DType::F32);
  Tensor out = Tensor::empty({2, 4}, DType::F32);
  const std::string e = error_of([&] { binary_forward(Binary::Add, out, a, b); });
  EXPECT_NE(e.find("binary_forward(add): b has shape [3], expected [2, 4] or a trailing part of it"),
            std::string::npos)
      << e;
  Tensor small = Tensor::empty({4}, DType::F32);
  EXPECT_NE(error_of([&] { binary_forward(Binary::Mul, small, a, a); }).find("out has shape [4], expected [2, 4]"),
            std::string::npos);
  const Tensor a64 = Tensor::full({2, 4}, 1.0, DType::F64);
  EXPECT_NE(error_of([&] { binary_forward(Binary::Sub, out, a, a64); }).find("expected dtype f32"),
            std::string::npos);
  const Tensor at = Tensor::full({4, 2}, 1.0, DType::F32).transpose(0, 1);
  EXPECT_NE(error_of([&] { binary_forward(Binary::Add, out, at, a); }).find("is not contiguous"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
TEST(EngineAxpby, ScaleAndAccumulate) {
  REWY_TEST_SEED(seed);
  for (DType dt : kDtypes) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = uniform({7, 3}, dt, seed, 0), y0 = uniform({7, 3}, dt, seed, 1);
    const std::vector<double> xv = x.to_vector(), yv = y0.to_vector();
    const double alpha = -1.25, beta = 0.75;
    // y = alpha·x + beta·y: two products and a sum in the compute type, then the final rounding.
    const double rtol = unit_roundoff(dt) + 4 * unit_roundoff(dt == DType::BF16 ? DType::F32 : dt);
    Tensor y = y0.clone();
    axpby(y, alpha, x, beta);
    std::vector<double> ref(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) ref[i] = alpha * xv[i] + beta * yv[i];
    EXPECT_TRUE(all_close(y, ref, rtol, rtol * 4));

    // beta == 0 must not read y: NaN there stays out of the result.
    Tensor out = poisoned({7, 3}, dt);
    scale_forward(out, x, alpha);
    for (size_t i = 0; i < xv.size(); ++i) ref[i] = alpha * xv[i];
    EXPECT_TRUE(all_close(out, ref, rtol, 0.0));
  }
}

TEST(EngineAxpby, ScaleBackwardMatchesFiniteDifferences) {
  REWY_TEST_SEED(seed);
  const Tensor x = uniform({6, 5}, DType::F64, seed, 0);
  const double alpha = 0.3;
  const ForwardFn f = [&](const std::vector<Tensor>& in) {
    Tensor out = Tensor::empty(in[0].shape(), DType::F64);
    scale_forward(out, in[0], alpha);
    return std::vector<Tensor>{out};
  };
  const DotLoss L = dot_loss(f, {x}, seed + 1);
  Tensor dx = poisoned(x.shape(), DType::F64);
  scale_backward(dx, L.cotangents[0], alpha);
  const GradcheckResult r = gradcheck(L.loss, {x}, {dx});
  EXPECT_LT(r.max_rel_error, 1e-6) << r.str();
}

TEST(EngineElementwise, CudaTensorsWithoutCudaGiveAClearError) {
  if (cuda_built()) GTEST_SKIP() << "built with CUDA";
  const Tensor x = Tensor::full({2}, 1.0, DType::F32);
  EXPECT_NE(error_of([&] { Tensor::empty({2}, DType::F32, cuda(0)); }).find("without CUDA"), std::string::npos);
  EXPECT_NO_THROW(unary(Unary::Exp, x));
}

}  // namespace
