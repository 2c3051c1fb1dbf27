#include "runtime/core/result.h"

#include <gtest/gtest.h>

#include <memory>

namespace {

using kiln::Error;
using kiln::Result;

Result<int> half(int x) {
  if (x % 2 != 0) return Error::InvalidArgument;
  return x / 2;
}

Result<int> quarter(int x) {
  KILN_TRY_ASSIGN(const int h, half(x));
  KILN_TRY_ASSIGN(const int q, half(h));
  return q;
}

Error check_even(int x) {
  KILN_TRY(half(x).error());
  return Error::Ok;
}

TEST(Result, HoldsAValueOrAnError) {
  Result<int> ok = half(8);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 4);
  EXPECT_EQ(ok.error(), Error::Ok);
  Result<int> bad = half(3);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), Error::InvalidArgument);
}

TEST(Result, OkIsNotAnError) {
  Result<int> r(Error::Ok);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error(), Error::Internal);
}

TEST(Result, TryMacrosPropagateTheFirstError) {
  EXPECT_EQ(*quarter(12), 3);
  EXPECT_EQ(quarter(6).error(), Error::InvalidArgument);
  EXPECT_EQ(check_even(4), Error::Ok);
  EXPECT_EQ(check_even(5), Error::InvalidArgument);
}

TEST(Result, MovesOnlyTypes) {
  Result<std::unique_ptr<int>> r(std::make_unique<int>(7));
  Result<std::unique_ptr<int>> moved(std::move(r));
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(**moved, 7);
}

}  // namespace

// Reading the value of a failed Result is a caller bug: every build type stops at it (the
// host preset builds this suite with NDEBUG), with a Fatal log line naming the error,
// instead of returning the union's uninitialized bytes.
TEST(ResultDeathTest, ValueOfAFailedResultAbortsInEveryBuildType) {
  Result<int> bad = half(3);
  EXPECT_DEATH((void)bad.get(), "Result::get\\(\\) on a failed Result \\(InvalidArgument");
  EXPECT_DEATH((void)*bad, "InvalidArgument");
  const Result<int>& read_only = bad;
  EXPECT_DEATH((void)read_only.get(), "InvalidArgument");
  Result<std::unique_ptr<int>> missing(Error::NotFound);
  EXPECT_DEATH((void)missing->get(), "NotFound");
}
