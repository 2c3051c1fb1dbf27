#include "runtime/core/memory_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using kiln::MemoryAllocator;

TEST(MemoryAllocator, AlignsAndCountsPadding) {
  alignas(64) uint8_t pool[128];
  MemoryAllocator allocator(pool + 1, 100);  // deliberately misaligned base
  void* a = allocator.allocate(3, 16);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 16, 0u);
  EXPECT_EQ(allocator.used(), 15u + 3u);
  void* b = allocator.allocate(8, 8);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 8, 0u);
  EXPECT_EQ(allocator.peak(), allocator.used());
}

TEST(MemoryAllocator, FailsWhenFullAndRecoversOnReset) {
  alignas(16) uint8_t pool[64];
  MemoryAllocator allocator(pool, sizeof(pool));
  EXPECT_NE(allocator.allocate(48), nullptr);
  EXPECT_EQ(allocator.allocate(32), nullptr);
  EXPECT_EQ(allocator.used(), 48u);  // a failed call takes nothing
  allocator.reset();
  EXPECT_EQ(allocator.used(), 0u);
  EXPECT_EQ(allocator.peak(), 48u);
  EXPECT_NE(allocator.allocate(64), nullptr);
  EXPECT_EQ(allocator.free_bytes(), 0u);
}

TEST(MemoryAllocator, RejectsBadAlignmentAndOverflow) {
  alignas(16) uint8_t pool[64];
  MemoryAllocator allocator(pool, sizeof(pool));
  EXPECT_EQ(allocator.allocate(4, 3), nullptr);
  EXPECT_EQ(allocator.allocate(SIZE_MAX), nullptr);
  EXPECT_EQ(allocator.allocate_list<uint64_t>(SIZE_MAX / 4), nullptr);
  MemoryAllocator empty(nullptr, 0);
  EXPECT_EQ(empty.allocate(1), nullptr);
}

}  // namespace
