// NpuDriver::prepare() on the virtual NPU drivers: the work memory is sized from the
// program when a delegate loads (the host's NPU grows it, up to its limit; a fixed one,
// as the firmware has, refuses a stream that needs more), so that no inference fails for
// lack of it. The streams are hand-made register commands (tests/cpp/vnpu/stream_builder.h).
#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "backends/arm/runtime/host_virtual_npu.h"
#include "backends/arm/runtime/virtual_npu_driver.h"
#include "stream_builder.h"

namespace kiln::ethos_u {
namespace {

using vnpu::testing::StreamBuilder;
using vnpu::u55::Cmd0;
using vnpu::u55::Cmd1;

/// A convolution's registers: ofm_depth x kernel_w x ifm_depth weights, OFM 1 x 8.
std::vector<uint32_t> conv(uint32_t ofm_depth, uint32_t ifm_depth, uint32_t kernel_w) {
  StreamBuilder s;
  s.ifm(1, 0, 1, 8 + kernel_w - 1, ifm_depth).ofm(1, 0, 1, 8, ofm_depth).unit_output_stage();
  s.cmd0(Cmd0::KernelHeightM1, 0).cmd0(Cmd0::KernelWidthM1, kernel_w - 1).cmd0(Cmd0::KernelStride, 0);
  s.cmd0(Cmd0::OfmBlkDepthM1, 15).cmd0(Cmd0::WeightRegion, 0).cmd1(Cmd1::WeightBase, 0).cmd1(Cmd1::WeightLength, 16);
  s.cmd0(Cmd0::ScaleRegion, 0).cmd1(Cmd1::ScaleBase, 0).cmd1(Cmd1::ScaleLength, 10u * ofm_depth);
  s.cmd0(Cmd0::OpConv).cmd0(Cmd0::OpStop, 0xffff);
  return s.words;
}

Span<const uint32_t> span(const std::vector<uint32_t>& words) { return {words.data(), words.size()}; }

uint64_t needed(const std::vector<uint32_t>& words, const char* target) {
  vnpu::Config config;
  EXPECT_TRUE(vnpu::config_from_target_name(target, &config));
  uint64_t bytes = 0;
  EXPECT_EQ(vnpu::work_memory_bytes(config, span(words), &bytes), Error::Ok);
  return bytes;
}

TEST(NpuWorkMemory, FixedWorkMemoryRefusesAStreamThatNeedsMore) {
  const std::vector<uint32_t> small = conv(16, 16, 3), wide = conv(256, 256, 32);
  std::vector<uint8_t> work(needed(small, "ethos-u55-128"));
  VirtualNpuDriver driver({work.data(), work.size()}, vnpu::Config{});
  EXPECT_EQ(driver.prepare(span(small), "ethos-u55-128"), Error::Ok);
  EXPECT_EQ(driver.prepare(span(small), nullptr), Error::Ok);  // the driver's default NPU
  EXPECT_EQ(driver.prepare(span(wide), "ethos-u55-128"), Error::OutOfResources);
  EXPECT_EQ(driver.prepare(span(small), "ethos-u99-7"), Error::NpuConfigMismatch);
}

TEST(NpuWorkMemory, HostNpuGrowsToTheProgramUpToItsLimit) {
  HostVirtualNpu& npu = host_virtual_npu();
  const size_t limit = npu.max_work_memory_bytes();
  EXPECT_EQ(limit, kHostMaxWorkMemoryBytes);
  // 2000 x 32 x 250 weights (a Wav2Letter layer): more than the recommended 12 MiB.
  const std::vector<uint32_t> wide = conv(2000, 250, 32);
  const uint64_t bytes = needed(wide, "ethos-u55-128");
  EXPECT_GT(bytes, vnpu::kRecommendedWorkMemoryBytes);
  ASSERT_EQ(npu.prepare(span(wide), "ethos-u55-128"), Error::Ok);
  EXPECT_GE(npu.work_memory_bytes(), bytes);
  // A request above the limit is refused with a named error; the memory stays as it was.
  const size_t before = npu.work_memory_bytes();
  npu.set_max_work_memory_bytes(vnpu::kRecommendedWorkMemoryBytes);
  EXPECT_EQ(npu.prepare(span(conv(2000, 250, 64)), "ethos-u55-128"), Error::OutOfResources);
  npu.set_max_work_memory_bytes(limit);
  EXPECT_EQ(npu.work_memory_bytes(), before);
  // Registers whose weights pass 2^64 bytes: refused, at once.
  EXPECT_EQ(npu.prepare(span(conv(65535, 65535, 65535)), "ethos-u55-128"), Error::OutOfResources);
  EXPECT_EQ(npu.prepare(span(wide), "ethos-u99-7"), Error::NpuConfigMismatch);
}

}  // namespace
}  // namespace kiln::ethos_u
