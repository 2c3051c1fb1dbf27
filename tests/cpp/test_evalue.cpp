#include "runtime/core/evalue.h"

#include <gtest/gtest.h>

namespace {

using kiln::EValue;
using kiln::Tag;

TEST(EValue, HoldsScalars) {
  EXPECT_TRUE(EValue().is_none());
  EValue i(int64_t{-7});
  EXPECT_EQ(i.tag(), Tag::Int);
  EXPECT_EQ(i.to_int(), -7);
  EXPECT_DOUBLE_EQ(i.scalar_to_double(), -7.0);
  EValue d(2.75);
  EXPECT_TRUE(d.is_double());
  EXPECT_EQ(d.scalar_to_int(), 2);
  EValue b(true);
  EXPECT_TRUE(b.is_bool() && b.to_bool() && b.is_scalar());
  EXPECT_EQ(b.scalar_to_int(), 1);
  EXPECT_FALSE(EValue().is_scalar());
}

TEST(EValue, UnboxesIntListsAtReadTime) {
  EValue a(int64_t{1});
  EValue b(int64_t{2});
  EValue* items[] = {&a, &b};
  int64_t scratch[2];
  EValue list = EValue::int_list({items, scratch, 2});
  ASSERT_TRUE(list.is_int_list());
  EXPECT_EQ(list.to_int_list()[1], 2);
  b = EValue(int64_t{20});  // a size computed at run time flows into the list
  EXPECT_EQ(list.to_int_list()[1], 20);
}

TEST(EValue, HoldsListsAndStrings) {
  const double doubles[] = {0.5, 1.5};
  EXPECT_EQ(EValue::double_list(doubles).to_double_list()[1], 1.5);
  const bool bools[] = {true, false};
  EXPECT_FALSE(EValue::bool_list(bools).to_bool_list()[1]);
  EValue s = EValue::string("abc", 3);
  EXPECT_EQ(s.tag(), Tag::String);
  EXPECT_EQ(s.to_string().size(), 3u);
  kiln::Tensor* tensors[] = {nullptr};
  EXPECT_TRUE(EValue::optional_tensor_list(tensors).is_optional_tensor_list());
  EXPECT_TRUE(EValue::tensor_list(tensors).is_tensor_list());
}

TEST(EValue, TagNames) {
  EXPECT_STREQ(kiln::tag_name(Tag::Tensor), "Tensor");
  EXPECT_STREQ(kiln::tag_name(Tag::ListOptionalTensor), "ListOptionalTensor");
}

}  // namespace
