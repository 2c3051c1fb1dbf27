#include "runtime/core/tensor.h"

#include <gtest/gtest.h>

namespace {

using kiln::Error;
using kiln::ScalarType;
using kiln::Tensor;

TEST(Tensor, ComputesStridesFromTheDimOrder) {
  int32_t sizes[] = {2, 3, 4};
  uint8_t order[] = {0, 1, 2};
  int32_t strides[3];
  float data[24];
  Tensor t(ScalarType::Float, 3, sizes, order, strides, data);
  EXPECT_EQ(t.numel(), 24u);
  EXPECT_EQ(t.nbytes(), 96u);
  EXPECT_EQ(t.strides()[0], 12);
  EXPECT_EQ(t.strides()[1], 4);
  EXPECT_EQ(t.strides()[2], 1);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.size(-1), 4);

  uint8_t channels_last[] = {0, 2, 1};  // dimension 1 innermost
  int32_t cl_strides[3];
  Tensor cl(ScalarType::Float, 3, sizes, channels_last, cl_strides, data);
  EXPECT_EQ(cl.strides()[1], 1);
  EXPECT_EQ(cl.strides()[2], 3);
  EXPECT_EQ(cl.strides()[0], 12);
  EXPECT_FALSE(cl.is_contiguous());
}

TEST(Tensor, ZeroDimTensorHasOneElement) {
  Tensor t(ScalarType::Long, 0, nullptr, nullptr, nullptr, nullptr);
  EXPECT_EQ(t.numel(), 1u);
  EXPECT_EQ(t.nbytes(), 8u);
}

TEST(Tensor, StaticTensorsKeepTheirShape) {
  int32_t sizes[] = {2, 3};
  uint8_t order[] = {0, 1};
  int32_t strides[2];
  Tensor t(ScalarType::Float, 2, sizes, order, strides, nullptr);
  const int32_t same[] = {2, 3};
  const int32_t other[] = {3, 2};
  const int32_t negative[] = {-1, 3};
  EXPECT_EQ(t.resize(same), Error::Ok);
  EXPECT_EQ(t.resize(other), Error::InvalidArgument);
  EXPECT_EQ(t.resize(negative), Error::InvalidArgument);
  EXPECT_EQ(t.resize({same, 1}), Error::InvalidArgument);
}

TEST(Tensor, BoundedTensorsShrinkButDoNotGrow) {
  int32_t sizes[] = {4, 3};
  uint8_t order[] = {0, 1};
  int32_t strides[2];
  Tensor t(ScalarType::Float, 2, sizes, order, strides, nullptr, kiln::ShapeDynamism::DynamicBound);
  const int32_t smaller[] = {2, 3};
  const int32_t larger[] = {5, 3};
  ASSERT_EQ(t.resize(smaller), Error::Ok);
  EXPECT_EQ(t.numel(), 6u);
  EXPECT_EQ(t.strides()[0], 3);
  EXPECT_EQ(t.resize(larger), Error::InvalidArgument);
  const int32_t full[] = {4, 3};
  EXPECT_EQ(t.resize(full), Error::Ok);
}

TEST(Tensor, SameShapeComparesRankAndSizes) {
  int32_t a_sizes[] = {2, 3};
  int32_t b_sizes[] = {2, 3, 1};
  uint8_t order[] = {0, 1, 2};
  int32_t a_strides[2];
  int32_t b_strides[3];
  Tensor a(ScalarType::Float, 2, a_sizes, order, a_strides, nullptr);
  Tensor b(ScalarType::Float, 3, b_sizes, order, b_strides, nullptr);
  EXPECT_TRUE(kiln::same_shape(a, a));
  EXPECT_FALSE(kiln::same_shape(a, b));
}

}  // namespace

TEST(Tensor, SizesMustKeepEveryStrideWithinInt32) {
  const int32_t fits[] = {0, 65535, 32768};
  const int32_t zero_does_not_help[] = {0, 65536, 65536};
  const int32_t negative[] = {2, -1};
  EXPECT_EQ(kiln::check_tensor_sizes(fits), Error::Ok);
  EXPECT_EQ(kiln::check_tensor_sizes(zero_does_not_help), Error::InvalidArgument);
  EXPECT_EQ(kiln::check_tensor_sizes(negative), Error::InvalidArgument);
  EXPECT_EQ(kiln::check_tensor_sizes({}), Error::Ok);
}

TEST(Tensor, ResizeRefusesSizesWhoseStridesOverflow) {
  int32_t sizes[] = {4, 4, 4};
  uint8_t order[] = {0, 1, 2};
  int32_t strides[3];
  Tensor t(ScalarType::Float, 3, sizes, order, strides, nullptr, kiln::ShapeDynamism::DynamicBound);
  // No elements (within the bound of 64) but strides of 2^32.
  const int32_t empty_but_huge[] = {0, 65536, 65536};
  EXPECT_EQ(t.resize(empty_but_huge), Error::InvalidArgument);
  EXPECT_EQ(t.sizes()[1], 4);
}
