#include "runtime/core/span.h"

#include <gtest/gtest.h>

namespace {

TEST(Span, ViewsAnArray) {
  int values[] = {1, 2, 3};
  kiln::Span<int> span(values);
  EXPECT_EQ(span.size(), 3u);
  EXPECT_FALSE(span.empty());
  span[1] = 20;
  EXPECT_EQ(values[1], 20);
  int sum = 0;
  for (int v : span) sum += v;
  EXPECT_EQ(sum, 24);
  kiln::Span<const int> view = span;
  EXPECT_EQ(view.data(), values);
}

TEST(Span, DefaultIsEmpty) {
  kiln::Span<int> span;
  EXPECT_TRUE(span.empty());
  EXPECT_EQ(span.begin(), span.end());
}

}  // namespace
