// Copy ops on CPU: permute/transpose against explicit index maps, casts against round_bf16,
// strided gathers and scatters, and every backward against finite differences.
#include <gtest/gtest.h>

#include "engine/gradcheck.h"
#include "engine/ops/copy_ops.h"
#include "test_engine_util.h"

using namespace rewy;
using namespace rewy::test;

namespace {

const DType kDtypes[] = {DType::F64, DType::F32, DType::BF16};

TEST(EngineCopyOps, PermuteMovesEveryElement) {
  REWY_TEST_SEED(seed);
  const Shape shape{2, 3, 4, 5};
  const std::vector<int> dims{2, 0, 3, 1};  // out [4, 2, 5, 3]
  for (DType dt : kDtypes) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = uniform(shape, dt, seed, 0);
    Tensor out = poisoned({4, 2, 5, 3}, dt);
    permute_forward(out, x, dims);
    const std::vector<double> xv = x.to_vector(), ov = out.to_vector();
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 3; ++b)
        for (int c = 0; c < 4; ++c)
          for (int d = 0; d < 5; ++d)  // out[c, a, d, b] = x[a, b, c, d]: a copy, so exact
            ASSERT_EQ(ov[size_t(((c * 2 + a) * 5 + d) * 3 + b)], xv[size_t(((a * 3 + b) * 4 + c) * 5 + d)]);
    Tensor back = poisoned(shape, dt);
    permute_backward(back, out, dims);  // the inverse permutation restores x
    EXPECT_EQ(back.to_vector(), xv);
  }
  EXPECT_EQ(inverse_permutation({2, 0, 3, 1}), (std::vector<int>{1, 3, 0, 2}));
}

TEST(EngineCopyOps, TransposeOfAViewAndItsBackward) {
  REWY_TEST_SEED(seed);
  const Tensor big = uniform({4, 6, 5}, DType::F32, seed, 0);
  const Tensor view = big.slice(1, 1, 4);  // [4, 3, 5], strided
  Tensor out = poisoned({5, 3, 4}, DType::F32);
  transpose_forward(out, view, 0, -1);
  const std::vector<double> bv = big.to_vector(), ov = out.to_vector();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 5; ++k) ASSERT_EQ(ov[size_t((k * 3 + j) * 4 + i)], bv[size_t((i * 6 + j + 1) * 5 + k)]);
  EXPECT_EQ(transpose(view, 2, 0).to_vector(), ov);
}

TEST(EngineCopyOps, CastRoundsToNearestEvenAndBack) {
  REWY_TEST_SEED(seed);
  const Tensor x = uniform({3, 17}, DType::F64, seed, 0, -100, 100);
  const std::vector<double> xv = x.to_vector();
  Tensor h = poisoned({3, 17}, DType::BF16), f = poisoned({3, 17}, DType::F32);
  cast_forward(h, x);
  cast_forward(f, x);
  const std::vector<double> hv = h.to_vector(), fv = f.to_vector();
  for (size_t i = 0; i < xv.size(); ++i) {
    ASSERT_EQ(fv[i], double(float(xv[i])));
    ASSERT_EQ(hv[i], double(round_bf16(float(xv[i]))));  // f64 -> f32 -> bf16, like the GPU path
  }
  // The backward casts the grad back to the input's dtype; bf16 values widen exactly.
  Tensor back = poisoned({3, 17}, DType::F64);
  cast_backward(back, h);
  EXPECT_EQ(back.to_vector(), hv);
  EXPECT_EQ(cast(h, DType::F32).to_vector(), hv);
}

TEST(EngineCopyOps, CopyGathersAndScattersViews) {
  REWY_TEST_SEED(seed);
  const Tensor src = uniform({5, 8}, DType::F32, seed, 0);
  const Tensor cols = src.slice(1, 2, 6).transpose(0, 1);  // [4, 5] strided gather
  Tensor out = poisoned({4, 5}, DType::F32);
  copy_forward(out, cols);
  EXPECT_EQ(out.to_vector(), cols.contiguous().to_vector());
  Tensor grad = Tensor::zeros({5, 8}, DType::F32);
  Tensor grad_view = grad.slice(1, 2, 6).transpose(0, 1);
  copy_backward(grad_view, out);  // scatter: the slice holds out, the rest stays 0
  const std::vector<double> gv = grad.to_vector(), sv = src.to_vector();
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 8; ++c)
      EXPECT_EQ(gv[size_t(r * 8 + c)], c >= 2 && c < 6 ? sv[size_t(r * 8 + c)] : 0.0);
}

TEST(EngineCopyOps, BackwardsMatchFiniteDifferences) {
  REWY_TEST_SEED(seed);
  const Tensor x = uniform({2, 3, 4}, DType::F64, seed, 0);
  const std::vector<int> dims{1, 2, 0};
  {
    const ForwardFn f = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{permute(in[0], dims)}; };
    const DotLoss L = dot_loss(f, {x}, seed + 1);
    Tensor dx = poisoned(x.shape(), DType::F64);
    permute_backward(dx, L.cotangents[0], dims);
    const GradcheckResult r = gradcheck(L.loss, {x}, {dx});
    EXPECT_LT(r.max_rel_error, 1e-6) << "permute: " << r.str();
  }
  {
    const ForwardFn f = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{transpose(in[0], 0, 2)}; };
    const DotLoss L = dot_loss(f, {x}, seed + 2);
    Tensor dx = poisoned(x.shape(), DType::F64);
    transpose_backward(dx, L.cotangents[0], 0, 2);
    const GradcheckResult r = gradcheck(L.loss, {x}, {dx});
    EXPECT_LT(r.max_rel_error, 1e-6) << "transpose: " << r.str();
  }
  {
    // A strided gather (select + transpose) and its scatter back into the same view of dx.
    const ForwardFn f = [&](const std::vector<Tensor>& in) {
      Tensor out = Tensor::empty({3, 2}, DType::F64);
      const Tensor v = in[0].select(2, 1).transpose(0, 1);
      copy_forward(out, v);
      return std::vector<Tensor>{out};
    };
    const DotLoss L = dot_loss(f, {x}, seed + 3);
    Tensor dx = Tensor::zeros(x.shape(), DType::F64);
    Tensor dv = dx.select(2, 1).transpose(0, 1);
    copy_backward(dv, L.cotangents[0]);
    const GradcheckResult r = gradcheck(L.loss, {x}, {dx});
    EXPECT_LT(r.max_rel_error, 1e-6) << "copy: " << r.str();
  }
}

TEST(EngineCopyOps, BadArgumentsNameTheOp) {
  const Tensor x = Tensor::full({2, 3}, 1.0, DType::F32);
  Tensor out = Tensor::empty({2, 3}, DType::F32);
  std::string e = error_of([&] { permute_forward(out, x, {0, 0}); });
  EXPECT_NE(e.find("permute_forward: dims [0, 0] are not a permutation of the 2 dims"), std::string::npos) << e;
  e = error_of([&] { permute_forward(out, x, {1, 0}); });
  EXPECT_NE(e.find("permute_forward: out has shape [2, 3], expected [3, 2]"), std::string::npos) << e;
  Tensor h = Tensor::empty({2, 3}, DType::BF16);
  e = error_of([&] { copy_forward(h, x); });
  EXPECT_NE(e.find("use cast_forward"), std::string::npos) << e;
  e = error_of([&] { transpose_forward(out, x, 0, 2); });
  EXPECT_NE(e.find("transpose_forward: dim 2 out of range"), std::string::npos) << e;
}

}  // namespace
