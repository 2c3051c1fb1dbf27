// The device's memory map: lookups, regions that end with their range, word access and
// the maps it refuses.
#include "backends/arm/vnpu/device/bus_memory.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace kiln::vnpu::device {
namespace {

TEST(BusMemory, FindsRangesAndCutsRegionsAtTheirEnd) {
  alignas(16) uint8_t a[64], b[32];
  const MemoryRange ranges[] = {{0x1000, a, sizeof(a), false}, {0x2000, b, sizeof(b), true}};
  BusMemory memory;
  ASSERT_EQ(memory.set(ranges), Error::Ok);
  EXPECT_EQ(memory.find(0x1000)->host, a);
  EXPECT_EQ(memory.find(0x103f)->host, a);
  EXPECT_EQ(memory.find(0x1040), nullptr);
  EXPECT_EQ(memory.find(0xfff), nullptr);
  const Region r = memory.region_at(0x1010);
  EXPECT_EQ(r.data, a + 16);
  EXPECT_EQ(r.size, 48u);
  EXPECT_FALSE(r.read_only);
  EXPECT_TRUE(memory.region_at(0x2000).read_only);
  const Region none = memory.region_at(0x3000);
  EXPECT_EQ(none.data, nullptr);
  EXPECT_EQ(none.size, 0u);
}

TEST(BusMemory, WordsMustBeAlignedAndInsideOneRange) {
  alignas(16) uint8_t a[64];
  const MemoryRange ranges[] = {{0x1000, a, sizeof(a), true}};
  BusMemory memory;
  ASSERT_EQ(memory.set(ranges), Error::Ok);
  Span<const uint32_t> words;
  ASSERT_TRUE(memory.words_at(0x1008, 16, &words));
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(words.data()), a + 8);
  EXPECT_EQ(words.size(), 4u);
  EXPECT_TRUE(memory.words_at(0x1000, 64, &words));
  EXPECT_FALSE(memory.words_at(0x1000, 68, &words));
  EXPECT_FALSE(memory.words_at(0x1002, 4, &words));
  EXPECT_FALSE(memory.words_at(0x1000, 6, &words));
  EXPECT_FALSE(memory.words_at(0x5000, 4, &words));
  EXPECT_TRUE(memory.words_at(0x5000, 0, &words));  // nothing to read
}

TEST(BusMemory, RefusesMapsItCannotServe) {
  alignas(16) uint8_t a[64];
  BusMemory memory;
  const MemoryRange overlapping[] = {{0x1000, a, 32, false}, {0x101f, a + 32, 32, false}};
  EXPECT_EQ(memory.set(overlapping), Error::InvalidArgument);
  const MemoryRange wrapping[] = {{UINT64_MAX - 8, a, 32, false}};
  EXPECT_EQ(memory.set(wrapping), Error::InvalidArgument);
  const MemoryRange null_host[] = {{0x1000, nullptr, 32, false}};
  EXPECT_EQ(memory.set(null_host), Error::InvalidArgument);
  const MemoryRange misaligned[] = {{0x1001, a, 32, false}};  // word offsets differ
  EXPECT_EQ(memory.set(misaligned), Error::InvalidArgument);
  MemoryRange many[kMaxMemoryRanges + 1];
  EXPECT_EQ(memory.set({many, kMaxMemoryRanges + 1}), Error::InvalidArgument);
}

}  // namespace
}  // namespace kiln::vnpu::device
