// The register trap's instruction decoder (examples/arm/platform/thumb_load_store.h) on the
// host. The encodings are the GNU assembler's (arm-none-eabi-as -march=armv8-m.main -mthumb
// of the instruction in each comment), not the decoder's own idea of them.
#include "examples/arm/platform/thumb_load_store.h"

#include <gtest/gtest.h>

namespace {

struct Decoded {
  bool ok;
  thumb_load_store access;
};

Decoded decode(uint16_t hw1, uint16_t hw2 = 0) {
  Decoded d{};
  d.ok = thumb_decode_load_store(hw1, hw2, &d.access) != 0;
  return d;
}

TEST(ThumbLoadStore, SixteenBitRegisterAndImmediateForms) {
  Decoded d = decode(0x58c8);  // ldr r0, [r1, r3]
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(d.access.is_load, 1);
  EXPECT_EQ(d.access.rt, 0u);
  EXPECT_EQ(d.access.rn, 1u);
  EXPECT_EQ(d.access.length, 2u);
  d = decode(0x50ca);  // str r2, [r1, r3]
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(d.access.is_load, 0);
  EXPECT_EQ(d.access.rt, 2u);
  d = decode(0x6853);  // ldr r3, [r2, #4]
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(d.access.is_load, 1);
  EXPECT_EQ(d.access.rt, 3u);
  EXPECT_EQ(d.access.rn, 2u);
  d = decode(0x67fd);  // str r5, [r7, #124]
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(d.access.is_load, 0);
  EXPECT_EQ(d.access.rt, 5u);
  EXPECT_EQ(d.access.rn, 7u);
  EXPECT_FALSE(d.access.writeback);
}

TEST(ThumbLoadStore, ThirtyTwoBitForms) {
  Decoded d = decode(0xf8d4, 0x9380);  // ldr.w r9, [r4, #896]
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(d.access.is_load, 1);
  EXPECT_EQ(d.access.rt, 9u);
  EXPECT_EQ(d.access.rn, 4u);
  EXPECT_EQ(d.access.length, 4u);
  EXPECT_FALSE(d.access.writeback);
  d = decode(0xf840, 0xbc08);  // str.w r11, [r0, #-8]
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(d.access.is_load, 0);
  EXPECT_EQ(d.access.rt, 11u);
  EXPECT_FALSE(d.access.writeback);
  d = decode(0xf8c1, 0xe010);  // str.w lr, [r1, #16]
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(d.access.rt, 14u);
  d = decode(0xf853, 0xa02c);  // ldr.w r10, [r3, r12, lsl #2]
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(d.access.rt, 10u);
  EXPECT_EQ(d.access.rn, 3u);
}

TEST(ThumbLoadStore, WriteBackMovesTheBase) {
  Decoded d = decode(0xf852, 0x8f04);  // ldr.w r8, [r2, #4]!
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(d.access.rt, 8u);
  EXPECT_EQ(d.access.rn, 2u);
  EXPECT_TRUE(d.access.writeback);
  EXPECT_EQ(d.access.writeback_delta, 4);
  d = decode(0xf846, 0x190c);  // str.w r1, [r6], #-12
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(d.access.is_load, 0);
  EXPECT_EQ(d.access.rn, 6u);
  EXPECT_TRUE(d.access.writeback);
  EXPECT_EQ(d.access.writeback_delta, -12);
}

TEST(ThumbLoadStore, RefusesWhatIsNotAWordAccessOfAGeneralRegister) {
  EXPECT_FALSE(decode(0x7808).ok);          // ldrb r0, [r1]
  EXPECT_FALSE(decode(0x8848).ok);          // ldrh r0, [r1, #2]
  EXPECT_FALSE(decode(0xe9d2, 0x0100).ok);  // ldrd r0, r1, [r2]
  EXPECT_FALSE(decode(0xe890, 0x0006).ok);  // ldmia.w r0, {r1, r2}
  EXPECT_FALSE(decode(0xf851, 0x0e04).ok);  // ldrt r0, [r1, #4]
  EXPECT_FALSE(decode(0xf8d0, 0xf000).ok);  // ldr.w pc, [r0]
  EXPECT_FALSE(decode(0xf8df, 0x0008).ok);  // ldr.w r0, [pc, #8]
  EXPECT_FALSE(decode(0xf8c0, 0xd000).ok);  // str.w sp, [r0]
}

TEST(ThumbLoadStore, ItStateAdvancesAndEnds) {
  // ITT EQ: ITSTATE 0x04 (IT[7:2] in xPSR[15:10], IT[1:0] in xPSR[26:25]) -> 0x08 -> 0,
  // by the architecture's ITAdvance(); the Thumb bit and the flags stay.
  const uint32_t thumb_and_z = (1u << 24) | (1u << 30);
  const uint32_t first = thumb_and_z | (0x04u >> 2) << 10;
  const uint32_t second = thumb_it_advance(first);
  EXPECT_EQ(second, thumb_and_z | (0x08u >> 2) << 10);
  EXPECT_EQ(thumb_it_advance(second), thumb_and_z);
  // Outside an IT block nothing changes.
  EXPECT_EQ(thumb_it_advance(thumb_and_z), thumb_and_z);
  // ITSTATE 0x1B (firstcond 0001 = NE, mask 1011): IT[1:0] = 11 live in
  // xPSR[26:25]; the advance keeps IT[7:5] and shifts IT[4:0].
  const uint32_t ne = thumb_and_z | (0x1Bu >> 2) << 10 | (0x1Bu & 3u) << 25;
  const uint32_t it = (0x1Bu & 0xE0u) | ((0x1Bu << 1) & 0x1Fu);  // 0x16
  EXPECT_EQ(thumb_it_advance(ne), thumb_and_z | (it >> 2) << 10 | (it & 3u) << 25);
}

}  // namespace
