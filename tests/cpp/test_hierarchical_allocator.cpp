#include "runtime/core/hierarchical_allocator.h"

#include <gtest/gtest.h>

namespace {

using kiln::Error;

TEST(HierarchicalAllocator, ResolvesOffsetsWithinBuffers) {
  uint8_t a[32];
  uint8_t b[8];
  kiln::Span<uint8_t> buffers[] = {{a, sizeof(a)}, {b, sizeof(b)}};
  kiln::HierarchicalAllocator planned(buffers);
  EXPECT_EQ(planned.num_buffers(), 2u);
  auto p = planned.get_offset_address(0, 16, 16);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, a + 16);
  EXPECT_EQ(planned.get_offset_address(1, 8, 0).error(), Error::Ok);
  EXPECT_EQ(planned.get_offset_address(0, 17, 16).error(), Error::MemoryAllocationFailed);
  EXPECT_EQ(planned.get_offset_address(1, SIZE_MAX, 2).error(), Error::MemoryAllocationFailed);
  EXPECT_EQ(planned.get_offset_address(0, 1, SIZE_MAX).error(), Error::MemoryAllocationFailed);
  EXPECT_EQ(planned.get_offset_address(2, 0, 1).error(), Error::NotFound);
}

}  // namespace
