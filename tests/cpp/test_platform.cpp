#include "runtime/platform/platform.h"

#include <gtest/gtest.h>

namespace {

TEST(Platform, TicksAreMonotonic) {
  kiln_pal_init();
  const uint64_t a = kiln_pal_current_ticks();
  const uint64_t b = kiln_pal_current_ticks();
  EXPECT_LE(a, b);
}

TEST(Platform, ConvertsTicksToNanoseconds) {
  uint64_t numerator = 0;
  uint64_t denominator = 0;
  kiln_pal_ticks_to_ns(&numerator, &denominator);
  ASSERT_GT(denominator, 0u);
  EXPECT_EQ(kiln::ticks_to_ns(1000), 1000 * numerator / denominator);
  // Large tick counts do not overflow in the conversion.
  EXPECT_EQ(kiln::ticks_to_ns(UINT64_MAX / 2) / numerator * denominator,
            UINT64_MAX / 2 / denominator * denominator);
}

TEST(Platform, EmitsLogLinesWithoutCrashing) {
  kiln_pal_emit_log_message(2, "/some/dir/file.cpp", 12, "message", 7);
  kiln_pal_emit_log_message(9, nullptr, 0, "", 0);
}

TEST(PlatformDeathTest, AbortStopsTheProgram) {
  EXPECT_DEATH(kiln_pal_abort(), "");
}

}  // namespace
