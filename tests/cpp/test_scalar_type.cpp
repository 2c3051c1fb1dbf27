#include "runtime/core/scalar_type.h"

#include <gtest/gtest.h>

namespace {

using kiln::ScalarType;

TEST(ScalarType, ElementSizesMatchTheCppTypes) {
  EXPECT_EQ(kiln::element_size(ScalarType::Byte), sizeof(uint8_t));
  EXPECT_EQ(kiln::element_size(ScalarType::Char), sizeof(int8_t));
  EXPECT_EQ(kiln::element_size(ScalarType::Short), sizeof(int16_t));
  EXPECT_EQ(kiln::element_size(ScalarType::Int), sizeof(int32_t));
  EXPECT_EQ(kiln::element_size(ScalarType::Long), sizeof(int64_t));
  EXPECT_EQ(kiln::element_size(ScalarType::Float), sizeof(float));
  EXPECT_EQ(kiln::element_size(ScalarType::Double), sizeof(double));
  EXPECT_EQ(kiln::element_size(ScalarType::Bool), sizeof(bool));
  EXPECT_EQ(kiln::element_size(ScalarType::Half), 2u);
  EXPECT_EQ(kiln::element_size(ScalarType::BFloat16), 2u);
}

TEST(ScalarType, UnknownCodesAreInvalid) {
  EXPECT_FALSE(kiln::is_valid_scalar_type(static_cast<ScalarType>(8)));
  EXPECT_FALSE(kiln::is_valid_scalar_type(static_cast<ScalarType>(99)));
  EXPECT_STREQ(kiln::scalar_type_name(static_cast<ScalarType>(99)), "Unknown");
  EXPECT_TRUE(kiln::is_valid_scalar_type(ScalarType::UInt64));
  EXPECT_STREQ(kiln::scalar_type_name(ScalarType::Float), "Float");
}

TEST(ScalarType, MapsCppTypes) {
  EXPECT_EQ(kiln::CppTypeToScalarType<float>::value, ScalarType::Float);
  EXPECT_EQ(kiln::CppTypeToScalarType<int8_t>::value, ScalarType::Char);
  EXPECT_EQ(kiln::CppTypeToScalarType<int64_t>::value, ScalarType::Long);
}

}  // namespace
