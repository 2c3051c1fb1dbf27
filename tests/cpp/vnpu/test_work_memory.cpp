// vnpu::work_memory_bytes(): the work memory a stream needs, from its registers alone. It
// must cover what run() then uses (Counters::work_memory_used, the arena's high-water
// mark), and a run given exactly that much must succeed. Vela's streams (conv, depthwise,
// chained U85 operations) are checked the same way in tests/python/arm/vnpu.
#include <gtest/gtest.h>

#include <vector>

#include "backends/arm/vnpu/virtual_npu.h"
#include "stream_builder.h"

namespace kiln::vnpu {
namespace {

using testing::StreamBuilder;
using u55::Cmd0;
using u55::Cmd1;

uint64_t needed(const std::vector<uint32_t>& words, Config config = Config{}) {
  uint64_t bytes = 0;
  EXPECT_EQ(work_memory_bytes(config, Span<const uint32_t>(words.data(), words.size()), &bytes), Error::Ok);
  return bytes;
}

/// A convolution's registers (weights and scales unread until it runs): `ofm_depth`
/// outputs of an ifm_depth-deep IFM with a kernel_h x kernel_w kernel, OFM 1 x out_w.
StreamBuilder conv(uint32_t ofm_depth, uint32_t ifm_depth, uint32_t kernel_h, uint32_t kernel_w, uint32_t out_w) {
  StreamBuilder s;
  s.ifm(1, 0, kernel_h, out_w + kernel_w - 1, ifm_depth).ofm(1, 0, 1, out_w, ofm_depth).unit_output_stage();
  s.cmd0(Cmd0::KernelHeightM1, kernel_h - 1).cmd0(Cmd0::KernelWidthM1, kernel_w - 1).cmd0(Cmd0::KernelStride, 0);
  s.cmd0(Cmd0::OfmBlkDepthM1, 15).cmd0(Cmd0::WeightRegion, 0).cmd1(Cmd1::WeightBase, 0).cmd1(Cmd1::WeightLength, 16);
  s.cmd0(Cmd0::ScaleRegion, 0).cmd1(Cmd1::ScaleBase, 0).cmd1(Cmd1::ScaleLength, 10u * ofm_depth);
  s.cmd0(Cmd0::OpConv);
  return s;
}

TEST(VnpuWorkMemory, CoversWhatARunUses) {
  // A 1x197 max pooling and an elementwise add: run with exactly what the stream needs.
  StreamBuilder s;
  s.ifm(1, 0, 1, 197, 16).ofm(1, 8192, 1, 1, 16).unit_output_stage();
  s.cmd0(Cmd0::KernelHeightM1, 0).cmd0(Cmd0::KernelWidthM1, 196).cmd0(Cmd0::OpPool, 0);
  s.ifm(1, 0, 4, 4, 8).ifm2(1, 256, 4, 4, 8).ofm(1, 512, 4, 4, 8).unit_output_stage();
  s.cmd0(Cmd0::OpElementwise, static_cast<uint32_t>(u55::ElementwiseMode::Add)).cmd0(Cmd0::OpStop, 0xffff);
  const uint64_t bytes = needed(s.words);
  EXPECT_GT(bytes, kInternalMemoryBytes);
  std::vector<uint8_t> work(bytes), region1(16384);
  VirtualNpu npu(Config{}, Span<uint8_t>(work.data(), work.size()));
  Region regions[2] = {{nullptr, 0}, {region1.data(), region1.size()}};
  Counters counters;
  ASSERT_EQ(npu.run(Span<const uint32_t>(s.words.data(), s.words.size()), Span<const Region>(regions, 2), &counters),
            Error::Ok);
  EXPECT_GT(counters.work_memory_used, kInternalMemoryBytes);
  EXPECT_LE(counters.work_memory_used, bytes);
}

TEST(VnpuWorkMemory, GrowsWithTheWeightsOfTheLargestOperation) {
  // Dense int16 weights and their decoded stream slots: at least 2 x 2 bytes per weight.
  const uint64_t small = needed(conv(16, 16, 1, 3, 8).words);
  const uint64_t wide = needed(conv(256, 256, 1, 32, 8).words);  // 2 Mi weights
  EXPECT_GE(wide - small, uint64_t{4} * 256 * 256 * 32 - uint64_t{4} * 16 * 16 * 3);
  // Two operations need what the larger one needs, not the sum.
  StreamBuilder both = conv(256, 256, 1, 32, 8);
  const std::vector<uint32_t> second = conv(16, 16, 1, 3, 8).words;
  both.words.insert(both.words.end(), second.begin(), second.end());
  EXPECT_EQ(needed(both.words), wide);
}

TEST(VnpuWorkMemory, HugeRegistersSaturateInsteadOfWrapping) {
  // 65536 x 65536 x 65536 x 65536 weights: more than 2^64 bytes, reported as UINT64_MAX
  // at once (nothing walks the weights).
  const uint64_t bytes = needed(conv(65536, 65536, 65536, 65536, 1).words);
  EXPECT_EQ(bytes, UINT64_MAX);
}

TEST(VnpuWorkMemory, InvalidRegistersAreNamed) {
  StreamBuilder s = conv(16, 16, 1, 3, 8);
  s.words.pop_back();                                          // the NPU_OP_CONV
  s.cmd0(Cmd0::KernelStride, 1u << 7).cmd0(Cmd0::OpConv);      // a reserved bit
  uint64_t bytes = 1;
  EXPECT_EQ(work_memory_bytes(Config{}, Span<const uint32_t>(s.words.data(), s.words.size()), &bytes),
            Error::NpuInvalidRegister);
  EXPECT_EQ(bytes, 0u);
}

}  // namespace
}  // namespace kiln::vnpu
