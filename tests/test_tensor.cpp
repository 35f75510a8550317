#include <gtest/gtest.h>

#include "engine/copy.h"
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

TEST(Tensor, CopyCastBetweenEveryDtypePair) {
  const DType all[] = {DType::F32, DType::BF16, DType::F64, DType::I32, DType::I64};
  const std::vector<double> v = {-3, -2, -1, 0, 1, 2, 3, 100};  // exact in every dtype
  for (DType from : all)
    for (DType to : all) {
      SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + dtype_name(to));
      const Tensor a = Tensor::from_vector(v, {2, 4}, from);
      Tensor b = Tensor::full({2, 4}, 7, to);
      b.copy_from(a);
      EXPECT_EQ(b.to_vector(), v);
      EXPECT_EQ(a.to(to).to_vector(), v);
    }
  // Non-integral values: float -> int truncates toward zero, f32 -> bf16 rounds to nearest even.
  const Tensor f = Tensor::from_vector({2.75, -2.75, 1.0 + 3.0 / 256}, {3}, DType::F32);
  EXPECT_EQ(f.to(DType::I32).to_vector(), (std::vector<double>{2, -2, 1}));
  EXPECT_EQ(f.to(DType::BF16).to_vector(), (std::vector<double>{2.75, -2.75, 1.0 + 4.0 / 256}));
}

TEST(Tensor, StridedCopiesAndFillsTouchOnlyTheView) {
  std::vector<double> v(12);
  for (int i = 0; i < 12; ++i) v[size_t(i)] = i + 1;
  Tensor dst = Tensor::zeros({3, 4}, DType::F64);
  Tensor dv = dst.slice(1, 1, 3).transpose(0, 1);  // [2, 3] view with strides [1, 4]
  const Tensor src = Tensor::from_vector({10, 20, 30, 40, 50, 60}, {2, 3}, DType::F32);
  dv.copy_from(src);
  EXPECT_EQ(dst.to_vector(), (std::vector<double>{0, 10, 40, 0, 0, 20, 50, 0, 0, 30, 60, 0}));
  fill(dst.select(1, 0), -1.0);  // column 0
  EXPECT_EQ(dst.to_vector(), (std::vector<double>{-1, 10, 40, 0, -1, 20, 50, 0, -1, 30, 60, 0}));
  const Tensor t = Tensor::from_vector(v, {3, 4}, DType::BF16);
  EXPECT_EQ(t.transpose(0, 1).contiguous().to_vector(),
            (std::vector<double>{1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12}));
}

TEST(Tensor, ToCloneAndViewsOwnership) {
  const Tensor a = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3}, DType::F32);
  const Tensor same = a.to(cpu());  // already there and contiguous: shares storage
  EXPECT_EQ(same.data_ptr(), a.data_ptr());
  Tensor c = a.clone();
  EXPECT_NE(c.data_ptr(), a.data_ptr());
  fill(c, 0.0);
  EXPECT_EQ(a.to_vector(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  const Tensor v = a.view({3, -1});
  EXPECT_EQ(v.shape(), (Shape{3, 2}));
  EXPECT_EQ(v.data_ptr(), a.data_ptr());
  EXPECT_EQ(a.permute({1, 0}).shape(), (Shape{3, 2}));
  EXPECT_EQ(a.select(-1, 2).to_vector(), (std::vector<double>{3, 6}));
  EXPECT_EQ(a.slice(0, 1, 1).numel(), 0);
  EXPECT_TRUE(a.slice(0, 1, 1).is_contiguous());  // empty: nothing out of place
  EXPECT_EQ(a.str(), "f32[2, 3] cpu");
  EXPECT_EQ(Tensor::from_vector({4.5}, {}, DType::F64).item(), 4.5);
}

TEST(Tensor, MisuseGivesClearErrors) {
  const Tensor a = Tensor::zeros({2, 3}, DType::F32);
  const auto message = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message([&] { a.data<double>(); }).find("tensor holds f32, accessed as f64"), std::string::npos);
  EXPECT_NE(message([&] { a.item(); }).find("item() of f32[2, 3] cpu"), std::string::npos);
  EXPECT_NE(message([&] { Tensor::from_vector({1, 2}, {3}); }).find("from_vector: 2 values for shape [3]"),
            std::string::npos);
  EXPECT_NE(message([&] { a.transpose(0, 1).view({6}); }).find("non-contiguous"), std::string::npos);
  EXPECT_NE(message([&] { a.permute({0, 0}); }).find("permute"), std::string::npos);
  EXPECT_NE(message([&] { a.select(0, 2); }).find("slice [2, 3) of dim 0"), std::string::npos);
  Tensor b = Tensor::zeros({3, 2}, DType::F32);
  EXPECT_NE(message([&] { b.copy_from(a); }).find("copy_from: shape [2, 3] into [3, 2]"), std::string::npos);
  EXPECT_NE(message([&] { Tensor::empty({2, -1}, DType::F32); }).find("negative size"), std::string::npos);
  EXPECT_NE(message([&] { parse_device("gpu"); }).find("bad device 'gpu'"), std::string::npos);
}
