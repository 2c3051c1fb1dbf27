// Fuzz-style test: random and mutated command streams must end in Ok or a named error,
// never crash or touch memory outside the regions (run under ASan/UBSan in host-debug).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "backends/arm/vnpu/virtual_npu.h"
#include "stream_builder.h"
#include "u85_stream_builder.h"

namespace kiln::vnpu {
namespace {

using testing::StreamBuilder;
using u55::Cmd0;
using u55::Cmd1;

// Opcodes the generator picks from (known ones, so that streams get past decoding).
constexpr uint16_t kCmd0[] = {0x002, 0x003, 0x005, 0x006, 0x010, 0x100, 0x101, 0x102, 0x103,
                              0x104, 0x105, 0x107, 0x109, 0x10a, 0x10b, 0x10c, 0x10f, 0x111,
                              0x112, 0x113, 0x114, 0x117, 0x118, 0x11a, 0x11b, 0x11c, 0x11f,
                              0x120, 0x121, 0x122, 0x125, 0x126, 0x127, 0x128, 0x129, 0x130,
                              0x131, 0x180, 0x181, 0x185, 0x189, 0x18a, 0x18b, 0x18c, 0x18f};
constexpr uint16_t kCmd1[] = {0x000, 0x001, 0x002, 0x003, 0x004, 0x005, 0x006, 0x010, 0x011,
                              0x014, 0x015, 0x016, 0x020, 0x021, 0x022, 0x023, 0x024, 0x025,
                              0x026, 0x030, 0x031, 0x032, 0x080, 0x084, 0x085, 0x086};

// Ethos-U85 codes: every cmd0 operation and register, every cmd1 register and the branch.
constexpr uint16_t kU85Cmd0[] = {
    0x002, 0x003, 0x005, 0x006, 0x007, 0x010, 0x100, 0x101, 0x102, 0x103, 0x104, 0x105, 0x107,
    0x108, 0x109, 0x10a, 0x10b, 0x10c, 0x10f, 0x111, 0x112, 0x113, 0x114, 0x115, 0x116, 0x117,
    0x118, 0x11a, 0x11b, 0x11c, 0x11f, 0x120, 0x121, 0x122, 0x124, 0x125, 0x126, 0x127, 0x128,
    0x129, 0x12a, 0x12b, 0x12c, 0x12d, 0x12e, 0x130, 0x131, 0x132, 0x133, 0x134, 0x180, 0x185,
    0x189, 0x18a, 0x18b, 0x18c, 0x18f};
constexpr uint16_t kU85Cmd1[] = {0x000, 0x001, 0x002, 0x003, 0x004, 0x005, 0x006, 0x010, 0x011, 0x012,
                                 0x013, 0x014, 0x015, 0x016, 0x020, 0x021, 0x022, 0x023, 0x024, 0x025,
                                 0x026, 0x027, 0x030, 0x031, 0x032, 0x033, 0x034, 0x035, 0x036, 0x037,
                                 0x038, 0x039, 0x080, 0x084, 0x085, 0x086, 0x090, 0x091, 0x092, 0x093,
                                 0x094, 0x095, 0x096, 0x097, 0x100};

Error run_stream(const std::vector<uint32_t>& words, std::vector<uint8_t>& r0,
                 std::vector<uint8_t>& r1, std::vector<uint8_t>& work, const char* target = "ethos-u55-128") {
  Config config;
  EXPECT_TRUE(config_from_target_name(target, &config));
  config.max_macs = 200000;  // keeps the run short; the limit itself is under test too
  config.max_operations = 64;
  config.max_commands = 20000;  // branches may loop
  VirtualNpu npu(config, Span<uint8_t>(work.data(), work.size()));
  Region regions[2] = {{r0.data(), r0.size()}, {r1.data(), r1.size()}};
  Counters counters;
  return npu.run(Span<const uint32_t>(words.data(), words.size()), Span<const Region>(regions, 2),
                 &counters);
}

uint32_t small_value(std::mt19937& rng) {
  switch (rng() % 4) {
    case 0: return rng() % 4;
    case 1: return rng() % 64;
    case 2: return rng() % 1024;
    default: return rng();
  }
}

TEST(VirtualNpuFuzz, RandomStreamsNeverCrash) {
  std::mt19937 rng(1234);
  std::vector<uint8_t> r0(2048), r1(4096), work(kInternalMemoryBytes + 512 * 1024);
  int ok = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::vector<uint32_t> words;
    const int length = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < length; ++i) {
      if (rng() % 3 == 0) {
        words.push_back(kCmd1[rng() % (sizeof(kCmd1) / sizeof(kCmd1[0]))] | kPayloadFlag |
                        ((rng() % 64) << 16));
        words.push_back(small_value(rng));
      } else if (rng() % 20 == 0) {
        words.push_back(rng());  // anything at all
      } else {
        words.push_back(kCmd0[rng() % (sizeof(kCmd0) / sizeof(kCmd0[0]))] | (small_value(rng) << 16));
      }
    }
    for (uint8_t& b : r0) b = static_cast<uint8_t>(rng());
    if (run_stream(words, r0, r1, work) == Error::Ok) ++ok;
  }
  EXPECT_GT(ok, 0);  // some streams are valid and run
}

TEST(VirtualNpuFuzz, MutatedValidStreamsNeverCrash) {
  StreamBuilder s;
  s.ifm(1, 0, 4, 4, 16).ifm2(1, 256, 4, 4, 16).ofm(1, 512, 4, 4, 16, true).unit_output_stage();
  s.cmd0(Cmd0::Ifm2Broadcast, 0).cmd0(Cmd0::OpElementwise, 1);
  s.cmd0(Cmd0::KernelWidthM1, 2).cmd0(Cmd0::KernelHeightM1, 2).cmd0(Cmd0::IfmPadTop, 1);
  s.cmd0(Cmd0::IfmPadLeft, 1).cmd0(Cmd0::IfmPadBottom, 1).cmd0(Cmd0::IfmPadRight, 1);
  s.cmd0(Cmd0::OpPool, 1);
  s.cmd0(Cmd0::WeightRegion, 0).cmd1(Cmd1::WeightBase, 0).cmd1(Cmd1::WeightLength, 1024);
  s.cmd0(Cmd0::ScaleRegion, 0).cmd1(Cmd1::ScaleBase, 1024).cmd1(Cmd1::ScaleLength, 160);
  s.cmd0(Cmd0::OpConv).cmd0(Cmd0::OpDepthwise);
  std::mt19937 rng(99);
  std::vector<uint8_t> r0(2048), r1(4096), work(kInternalMemoryBytes + 512 * 1024);
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::vector<uint32_t> words = s.words;
    const int flips = 1 + static_cast<int>(rng() % 6);
    for (int f = 0; f < flips; ++f) words[rng() % words.size()] ^= 1u << (rng() % 32);
    for (uint8_t& b : r0) b = static_cast<uint8_t>(rng());  // random "weight stream"
    // A mutated stream may be refused; only a crash (or a sanitizer report) fails the test.
    (void)run_stream(words, r0, r1, work);
  }
  SUCCEED();
}

TEST(VirtualNpuFuzz, RandomU85StreamsNeverCrash) {
  std::mt19937 rng(4321);
  std::vector<uint8_t> r0(2048), r1(4096), work(kInternalMemoryBytes + 512 * 1024);
  const char* targets[] = {"ethos-u85-256", "ethos-u85-512", "ethos-u85-2048"};
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::vector<uint32_t> words;
    const int length = 1 + static_cast<int>(rng() % 80);
    for (int i = 0; i < length; ++i) {
      if (rng() % 3 == 0) {
        words.push_back(kU85Cmd1[rng() % (sizeof(kU85Cmd1) / sizeof(kU85Cmd1[0]))] | kPayloadFlag |
                        ((rng() % 4 == 0 ? rng() % 256 : rng() % 4) << 16));
        // Branch targets anywhere (forward, backward, outside), other payloads small or wild.
        words.push_back(rng() % 2 == 0 ? 4 * (rng() % (length + 4)) : small_value(rng));
      } else if (rng() % 20 == 0) {
        words.push_back(rng());  // anything at all
      } else {
        words.push_back(kU85Cmd0[rng() % (sizeof(kU85Cmd0) / sizeof(kU85Cmd0[0]))] | (small_value(rng) << 16));
      }
    }
    for (uint8_t& b : r0) b = static_cast<uint8_t>(rng());
    // A mutated stream may be refused; only a crash (or a sanitizer report) fails the test.
    (void)run_stream(words, r0, r1, work, targets[iteration % 3]);
  }
  SUCCEED();
}

TEST(VirtualNpuFuzz, MutatedValidU85StreamsNeverCrash) {
  using testing::U85StreamBuilder;
  using Cmd0 = u85::Cmd0;
  using Cmd1 = u85::Cmd1;
  U85StreamBuilder s;  // chained add, transposed copy, 2D and indexed DMA, conv, branch
  s.unit_scales().input(false, 1, 0, 2, 3, 4).input(true, 1, 64, 2, 3, 4);
  s.ofm(2, 0, 2, 3, 4, 2).elementwise(u85::ElementwiseMode::Add);
  s.input(false, 2, 0, 2, 3, 4, 2).input(true, 1, 128, 2, 3, 4);
  s.ofm(1, 256, 2, 3, 4, 0, 1, 2).elementwise(u85::ElementwiseMode::Add);
  s.cmd0(Cmd0::Dma0SrcRegion, 1u | (1u << u85::kDmaStrideModeShift) | u85::kDmaIndexed).cmd0(Cmd0::Dma0DstRegion, 1);
  s.cmd1(Cmd1::Dma0Src, 0).cmd1(Cmd1::Dma0Dst, 1024).cmd1(Cmd1::Dma0Len, 4).cmd0(Cmd0::Dma0Size0, 3);
  s.cmd1(Cmd1::Dma0SrcStride0, 4).cmd1(Cmd1::Dma0DstStride0, 4).cmd0(Cmd0::Dma0IdxRegion, 1);
  s.cmd1(Cmd1::Dma0Idx, 2048).cmd1(Cmd1::Dma0IdxMax, 9).cmd0(Cmd0::OpDmaStart);
  s.cmd0(Cmd0::KernelWidthM1, 2).cmd0(Cmd0::KernelHeightM1, 2).cmd0(Cmd0::IfmPadTop, 1);
  s.cmd0(Cmd0::WeightRegion, 0).cmd1(Cmd1::WeightBase, 0).cmd1(Cmd1::WeightLength, 1024);
  s.cmd0(Cmd0::ScaleRegion, 0).cmd1(Cmd1::ScaleBase, 1024).cmd1(Cmd1::ScaleLength, 320);
  s.cmd0(Cmd0::OfmPrecision, 1).cmd0(Cmd0::OfmBlkDepthM1, 15).cmd0(Cmd0::OpConv).cmd0(Cmd0::OpDepthwise);
  s.cmd0(Cmd0::OpPool, 1).cmd0(Cmd0::OpResize, 0).branch(0, true).stop();
  std::mt19937 rng(77);
  std::vector<uint8_t> r0(2048), r1(4096), work(kInternalMemoryBytes + 512 * 1024);
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::vector<uint32_t> words = s.words;
    const int flips = 1 + static_cast<int>(rng() % 6);
    for (int f = 0; f < flips; ++f) words[rng() % words.size()] ^= 1u << (rng() % 32);
    for (uint8_t& b : r0) b = static_cast<uint8_t>(rng());
    for (size_t i = 2048; i < 2060; ++i) r1[i] = static_cast<uint8_t>(rng() % 12);  // indices
    // A mutated stream may be refused; only a crash (or a sanitizer report) fails the test.
    (void)run_stream(words, r0, r1, work, iteration % 2 == 0 ? "ethos-u85-256" : "ethos-u85-1024");
  }
  SUCCEED();
}

}  // namespace
}  // namespace kiln::vnpu
