#include <gtest/gtest.h>

#include "engine/tensor.h"

using namespace rewy;

TEST(Tensor, ViewsShareStorageAndCopiesDoNot) {
  std::vector<double> v(24);
  for (int i = 0; i < 24; ++i) v[i] = i + 0.5;
  Tensor t = Tensor::from_vector(v, {2, 3, 4}, DType::F32);
  Tensor tt = t.transpose(0, 2);  // [4, 3, 2]
  EXPECT_FALSE(tt.is_contiguous());
  EXPECT_EQ(tt.shape(), (Shape{4, 3, 2}));
  Tensor c = tt.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  auto cv = c.to_vector();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) EXPECT_EQ(cv[(i * 3 + j) * 2 + k], v[(k * 3 + j) * 4 + i]);
  Tensor s = t.slice(1, 1, 3).select(2, 2);  // [2, 2]
  auto sv = s.to_vector();
  EXPECT_EQ(sv, (std::vector<double>{v[6], v[10], v[18], v[22]}));
}

TEST(Tensor, Bf16RoundsToNearestEven) {
  // 1 + 2^-8 is halfway between two bf16 values: rounds to even (1.0); 1 + 3*2^-8 rounds up.
  EXPECT_EQ(float(bf16(1.0f + 1.0f / 256)), 1.0f);
  EXPECT_EQ(float(bf16(1.0f + 3.0f / 256)), 1.0f + 4.0f / 256);
  Tensor t = Tensor::from_vector({1.0 + 1.0 / 256, -2.5, 3.0}, {3}, DType::BF16);
  EXPECT_EQ(t.to_vector(), (std::vector<double>{1.0, -2.5, 3.0}));
}

TEST(Tensor, BadShapesGiveClearErrors) {
  Tensor t = Tensor::zeros({2, 3}, DType::F32);
  EXPECT_THROW(t.view({4, 2}), Error);
  EXPECT_THROW(t.slice(1, 2, 5), Error);
  try {
    check_shape(t, {3, 2}, "q");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("q has shape [2, 3], expected [3, 2]"), std::string::npos);
  }
}
