// The virtual Ethos-U85 on hand-made command streams: chaining, transpose on output, 2D and
// indexed DMA, branches, configuration checks and the named errors of hostile streams.
// Bit-exactness against the TOSA reference on Vela's streams is tested in tests/python/arm/vnpu.
#include "backends/arm/vnpu/virtual_npu.h"

#include <gtest/gtest.h>

#include <vector>

#include "u85_stream_builder.h"

namespace kiln::vnpu {
namespace {

using testing::U85StreamBuilder;
using Cmd0 = u85::Cmd0;
using Cmd1 = u85::Cmd1;
using u85::ElementwiseMode;

Config u85_config(int macs = 256) {
  Config config;
  EXPECT_TRUE(config_from_target_name(macs == 256 ? "ethos-u85-256" : "ethos-u85-1024", &config));
  return config;
}

class VirtualNpuU85Test : public ::testing::Test {
 protected:
  Error run(const std::vector<uint32_t>& words, Config config = u85_config()) {
    VirtualNpu npu(config, Span<uint8_t>(work.data(), work.size()));
    Region bound[3] = {{region0.data(), region0.size(), true}, {region1.data(), region1.size()},
                       {region2.data(), region2.size()}};
    return npu.run(Span<const uint32_t>(words.data(), words.size()), Span<const Region>(bound, 3),
                   &counters, Span<OpRecord>(records, 16), &num_records);
  }
  void fill(std::vector<uint8_t>& r, uint32_t offset, uint32_t n, int seed) {
    for (uint32_t i = 0; i < n; ++i) r[offset + i] = static_cast<uint8_t>(static_cast<int8_t>((i * 7 + seed) % 41 - 20));
  }
  int8_t at(const std::vector<uint8_t>& r, size_t i) const { return static_cast<int8_t>(r[i]); }

  std::vector<uint8_t> work = std::vector<uint8_t>(kInternalMemoryBytes + 256 * 1024);
  std::vector<uint8_t> region0 = std::vector<uint8_t>(256);
  std::vector<uint8_t> region1 = std::vector<uint8_t>(1024);
  std::vector<uint8_t> region2 = std::vector<uint8_t>(512);
  Counters counters;
  OpRecord records[16];
  size_t num_records = 0;
};

TEST_F(VirtualNpuU85Test, ChainedAddsNeverTouchMemoryInBetween) {
  // a + b into chaining buffer 2, then (chained) + c into memory: out = a + b + c.
  fill(region1, 0, 24, 1);
  fill(region1, 64, 24, 2);
  fill(region1, 128, 24, 3);
  U85StreamBuilder s;
  s.unit_scales().input(false, 1, 0, 2, 3, 4).input(true, 1, 64, 2, 3, 4);
  s.ofm(2, 0, 2, 3, 4, /*storage=*/2).elementwise(ElementwiseMode::Add);
  s.input(false, 2, 0, 2, 3, 4, /*storage=*/2).input(true, 1, 128, 2, 3, 4);
  s.ofm(1, 256, 2, 3, 4).elementwise(ElementwiseMode::Add).stop();
  ASSERT_EQ(run(s.words), Error::Ok);
  for (size_t i = 0; i < 24; ++i) {
    EXPECT_EQ(at(region1, 256 + i), at(region1, i) + at(region1, 64 + i) + at(region1, 128 + i)) << i;
  }
  EXPECT_EQ(counters.operations, 2u);
  EXPECT_EQ(counters.chained_operations, 2u);
  EXPECT_EQ(records[0].chained, 1u);
  EXPECT_EQ(records[1].chained, 1u);
  // Region 2 is the chaining buffer's slot number, not memory: untouched.
  for (uint8_t v : region2) EXPECT_EQ(v, 0u);
}

TEST_F(VirtualNpuU85Test, ReadingAChainingBufferNobodyWroteIsNamed) {
  U85StreamBuilder s;
  s.unit_scales().input(false, 3, 0, 2, 3, 4, /*storage=*/2).input(true, 1, 64, 2, 3, 4);
  s.ofm(1, 256, 2, 3, 4).elementwise(ElementwiseMode::Add).stop();
  EXPECT_EQ(run(s.words), Error::NpuInvalidRegister);
  U85StreamBuilder bad_slot;  // slots 0-5 exist
  bad_slot.unit_scales().input(false, 1, 0, 2, 3, 4).input(true, 1, 64, 2, 3, 4);
  bad_slot.ofm(7, 0, 2, 3, 4, /*storage=*/2).elementwise(ElementwiseMode::Add).stop();
  EXPECT_EQ(run(bad_slot.words), Error::NpuInvalidRegister);
}

TEST_F(VirtualNpuU85Test, TransposedOutputSwapsHeightAndWidth) {
  fill(region1, 0, 24, 5);
  U85StreamBuilder s;  // OFM 2x3x4 written as 3x2x4 (transpose WHC = 1)
  s.unit_scales().input(false, 1, 0, 2, 3, 4).cmd0(Cmd0::Ifm2Broadcast, u85::kBroadcastScalar);
  s.cmd1(Cmd1::OpScalar, 0).cmd0(Cmd0::Ifm2ZeroPoint, 0).cmd0(Cmd0::Ifm2Precision, 1u | (3u << 14));
  s.ofm(1, 256, 2, 3, 4, 0, /*transpose=*/1, /*mw=*/2).elementwise(ElementwiseMode::Add).stop();
  ASSERT_EQ(run(s.words), Error::Ok);
  for (uint32_t y = 0; y < 2; ++y) {
    for (uint32_t x = 0; x < 3; ++x) {
      for (uint32_t c = 0; c < 4; ++c) {
        EXPECT_EQ(at(region1, 256 + (x * 2 + y) * 4 + c), at(region1, (y * 3 + x) * 4 + c));
      }
    }
  }
}

TEST_F(VirtualNpuU85Test, TwoDimensionalDmaCopiesRowsWithStrides) {
  fill(region1, 0, 64, 9);
  U85StreamBuilder s;  // three rows of 5 bytes, 16 apart in the source, 8 apart in the destination
  s.cmd0(Cmd0::Dma0SrcRegion, 1u | (1u << u85::kDmaStrideModeShift)).cmd0(Cmd0::Dma0DstRegion, 2);
  s.cmd1(Cmd1::Dma0Src, 2).cmd1(Cmd1::Dma0Dst, 100).cmd1(Cmd1::Dma0Len, 5).cmd0(Cmd0::Dma0Size0, 3);
  s.cmd1(Cmd1::Dma0SrcStride0, 16).cmd1(Cmd1::Dma0DstStride0, 8).cmd0(Cmd0::OpDmaStart).stop();
  ASSERT_EQ(run(s.words), Error::Ok);
  for (uint32_t row = 0; row < 3; ++row) {
    for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(region2[100 + row * 8 + i], region1[2 + row * 16 + i]);
  }
  EXPECT_EQ(counters.bytes_written[2], 15u);
}

TEST_F(VirtualNpuU85Test, IndexedDmaGathersRowsAndRefusesOutOfRangeIndices) {
  fill(region1, 0, 40, 3);  // 10 rows of 4 bytes
  const int32_t indices[3] = {7, 0, 7};
  for (int i = 0; i < 3; ++i) {
    for (int b = 0; b < 4; ++b) region1[512 + 4 * i + b] = static_cast<uint8_t>(indices[i] >> (8 * b));
  }
  U85StreamBuilder s;
  s.cmd0(Cmd0::Dma0SrcRegion, 1u | u85::kDmaIndexed).cmd0(Cmd0::Dma0DstRegion, 2);
  s.cmd1(Cmd1::Dma0Src, 0).cmd1(Cmd1::Dma0Dst, 0).cmd1(Cmd1::Dma0Len, 4).cmd0(Cmd0::Dma0Size0, 3);
  s.cmd1(Cmd1::Dma0SrcStride0, 4).cmd1(Cmd1::Dma0DstStride0, 4);
  s.cmd0(Cmd0::Dma0IdxRegion, 1).cmd1(Cmd1::Dma0Idx, 512).cmd1(Cmd1::Dma0IdxMax, 9);
  U85StreamBuilder run_it = s;
  run_it.cmd0(Cmd0::OpDmaStart).stop();
  ASSERT_EQ(run(run_it.words), Error::Ok);
  for (int i = 0; i < 3; ++i) {
    for (int b = 0; b < 4; ++b) EXPECT_EQ(region2[4 * i + b], region1[4 * indices[i] + b]);
  }
  U85StreamBuilder low_max = s;  // index 7 > IDX_MAX 6
  low_max.cmd1(Cmd1::Dma0IdxMax, 6).cmd0(Cmd0::OpDmaStart).stop();
  EXPECT_EQ(run(low_max.words), Error::NpuRegionOutOfBounds);
  U85StreamBuilder far = s;  // within IDX_MAX, but the row lies outside the region
  far.cmd1(Cmd1::Dma0SrcStride0, 400).cmd0(Cmd0::OpDmaStart).stop();
  EXPECT_EQ(run(far.words), Error::NpuRegionOutOfBounds);
  U85StreamBuilder table_outside = s;
  table_outside.cmd1(Cmd1::Dma0Idx, 1020).cmd0(Cmd0::OpDmaStart).stop();
  EXPECT_EQ(run(table_outside.words), Error::NpuRegionOutOfBounds);
}

TEST_F(VirtualNpuU85Test, DmaOutsideARegionOrIntoTheWeightsIsRefused) {
  U85StreamBuilder outside;
  outside.dma(1, 1000, 2, 0, 100).stop();
  EXPECT_EQ(run(outside.words), Error::NpuRegionOutOfBounds);
  U85StreamBuilder weights;
  weights.dma(1, 0, 0, 0, 16).stop();
  EXPECT_EQ(run(weights.words), Error::NpuRegionReadOnly);
  U85StreamBuilder lut;  // the LUT memory has 2 KiB
  lut.dma(1, 0, 1u | u85::kDmaInternal, 2040, 16).stop();
  EXPECT_EQ(run(lut.words), Error::NpuRegionOutOfBounds);
}

TEST_F(VirtualNpuU85Test, BranchesJumpAndLoopsHitTheWorkBound) {
  U85StreamBuilder failing_dma;
  failing_dma.dma(1, 1000, 2, 0, 100);
  U85StreamBuilder s;  // branch over a DMA that would fail, to the STOP after it
  s.branch(2 + failing_dma.position());
  s.words.insert(s.words.end(), failing_dma.words.begin(), failing_dma.words.end());
  s.stop();
  EXPECT_EQ(run(s.words), Error::Ok);
  EXPECT_EQ(counters.branches, 1u);

  U85StreamBuilder loop;
  loop.dma(1, 0, 2, 0, 4).branch(0);
  Config config = u85_config();
  config.max_commands = 10000;
  EXPECT_EQ(run(loop.words, config), Error::NpuWorkLimitExceeded);
  EXPECT_LE(counters.commands, 10001u);

  U85StreamBuilder outside;
  outside.branch(1000).stop();
  EXPECT_EQ(run(outside.words), Error::NpuInvalidRegister);
  U85StreamBuilder unaligned;
  unaligned.cmd1(Cmd1::OpBranch, 6).stop();
  EXPECT_EQ(run(unaligned.words), Error::NpuInvalidRegister);
}

TEST_F(VirtualNpuU85Test, ConditionalBranchFollowsTheLastResult) {
  // An elementwise op writes one element: a - a = 0 (flag clear) or a - 0 = a (flag set).
  region1[0] = 5;
  for (int take : {0, 1}) {
    U85StreamBuilder s;
    s.unit_scales().input(false, 1, 0, 1, 1, 1).cmd0(Cmd0::Ifm2Broadcast, u85::kBroadcastScalar);
    s.cmd1(Cmd1::OpScalar, take ? 0u : 5u).cmd0(Cmd0::Ifm2ZeroPoint, 0).cmd0(Cmd0::Ifm2Precision, 1u | (3u << 14));
    s.ofm(1, 300, 1, 1, 1).elementwise(ElementwiseMode::Sub);
    U85StreamBuilder dma;  // runs only when the branch is not taken
    dma.dma(1, 0, 2, 50, 1);
    s.branch(s.position() + 2 + dma.position(), /*conditional=*/true);
    s.words.insert(s.words.end(), dma.words.begin(), dma.words.end());
    s.stop();
    ASSERT_EQ(run(s.words), Error::Ok);
    EXPECT_EQ(counters.branches, take ? 1u : 0u);
    EXPECT_EQ(counters.dma_transfers, take ? 0u : 1u);
  }
}

TEST_F(VirtualNpuU85Test, UnknownCommandsAreNamed) {
  EXPECT_EQ(run({0x0123}), Error::NpuUnknownCommand);         // PARALLEL_MODE is an Ethos-U55/U65 register
  EXPECT_EQ(run({0x0008}), Error::NpuUnknownCommand);         // no operation 0x008
  EXPECT_EQ(run({0x4000 | 0x0101, 0}), Error::NpuUnknownCommand);  // no cmd1 operation 0x101
  EXPECT_EQ(run({0x0007 | (3u << 16)}), Error::NpuInvalidRegister);  // resize mode 3 is reserved
}

TEST_F(VirtualNpuU85Test, ShiftsAbove62AreRefusedAtDecode) {
  // The truncating rounding term of a 63-bit shift does not fit the scaling unit.
  U85StreamBuilder s;
  s.unit_scales().input(false, 1, 0, 1, 1, 4).input(true, 1, 64, 1, 1, 4);
  s.ofm(1, 256, 1, 1, 4).cmd1(Cmd1::OfmScale, 1, 63u | (4u << 13)).elementwise(ElementwiseMode::Add).stop();
  EXPECT_EQ(run(s.words), Error::NpuInvalidRegister);
  U85StreamBuilder ifm;
  ifm.unit_scales().input(false, 1, 0, 1, 1, 4).input(true, 1, 64, 1, 1, 4);
  ifm.ofm(1, 256, 1, 1, 4).cmd1(Cmd1::IfmScale, 1, 63u).elementwise(ElementwiseMode::Add).stop();
  EXPECT_EQ(run(ifm.words), Error::NpuInvalidRegister);
}

TEST_F(VirtualNpuU85Test, Cop1PayloadMustMatchProductMacsAndCores) {
  U85StreamBuilder body;
  body.dma(1, 0, 2, 0, 4).stop();
  // Config word: product 2, 256 MACs (2^8), one weight decoder.
  const uint32_t config_word = (2u << 28) | 8u;
  std::vector<uint32_t> payload = {kCop1Magic, 0x00100001, config_word, 0x10066001,
                                   0x00000002 | (static_cast<uint32_t>(body.words.size()) << 16)};
  payload.insert(payload.end(), body.words.begin(), body.words.end());
  EXPECT_EQ(run(payload), Error::Ok);
  EXPECT_EQ(run(payload, u85_config(1024)), Error::NpuConfigMismatch);  // 1024 MACs on 4 cores
  Config u55;
  EXPECT_EQ(run(payload, u55), Error::NpuConfigMismatch);  // an Ethos-U85 stream on an Ethos-U55
}

}  // namespace
}  // namespace kiln::vnpu
