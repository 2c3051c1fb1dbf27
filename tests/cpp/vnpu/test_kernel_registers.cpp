// The kernel registers' ranges (decode_common.h): every kernel size, padding, stride and
// dilation the register fields hold runs; reserved bits and values outside the fields are
// named errors. Expected results come from plain loops over the same input.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "backends/arm/vnpu/decode_common.h"
#include "backends/arm/vnpu/virtual_npu.h"
#include "stream_builder.h"

namespace kiln::vnpu {
namespace {

using testing::StreamBuilder;
using u55::Cmd0;
using u55::PoolingMode;

class KernelRegisterTest : public ::testing::Test {
 protected:
  Error run(const std::vector<uint32_t>& words, Arch arch = Arch::EthosU55) {
    Config config;
    config.arch = arch;
    config.macs = arch == Arch::EthosU65 ? 256 : 128;
    VirtualNpu npu(config, Span<uint8_t>(work.data(), work.size()));
    Region bound[2] = {{region0.data(), region0.size()}, {region1.data(), region1.size()}};
    return npu.run(Span<const uint32_t>(words.data(), words.size()), Span<const Region>(bound, 2), nullptr);
  }
  /// A max pooling of an int8 h x w x depth IFM at offset 0 of region 1 into an OFM at
  /// kOfm, with the given kernel registers.
  StreamBuilder max_pool(uint32_t ifm_h, uint32_t ifm_w, uint32_t ofm_h, uint32_t ofm_w, uint32_t kernel_h,
                         uint32_t kernel_w, uint32_t stride_param = 0, uint32_t pad_top = 0,
                         uint32_t pad_bottom = 0) {
    StreamBuilder s;
    s.ifm(1, 0, ifm_h, ifm_w, kDepth).ofm(1, kOfm, ofm_h, ofm_w, kDepth).unit_output_stage();
    s.cmd0(Cmd0::KernelHeightM1, kernel_h - 1).cmd0(Cmd0::KernelWidthM1, kernel_w - 1);
    s.cmd0(Cmd0::KernelStride, stride_param).cmd0(Cmd0::IfmPadTop, pad_top).cmd0(Cmd0::IfmPadLeft, 0);
    s.cmd0(Cmd0::IfmPadBottom, pad_bottom).cmd0(Cmd0::IfmPadRight, 0);
    s.cmd0(Cmd0::OpPool, static_cast<uint32_t>(PoolingMode::Max));
    return s;
  }
  void fill_ifm(size_t count) {
    for (size_t i = 0; i < count; ++i) region1[i] = static_cast<uint8_t>((i * 37 + 11) % 251);
  }
  int8_t ifm(size_t i) const { return static_cast<int8_t>(region1[i]); }
  int8_t ofm(size_t i) const { return static_cast<int8_t>(region1[kOfm + i]); }

  static constexpr uint32_t kDepth = 2;
  static constexpr uint32_t kOfm = 60000;
  std::vector<uint8_t> work = std::vector<uint8_t>(kInternalMemoryBytes + 256 * 1024);
  std::vector<uint8_t> region0 = std::vector<uint8_t>(64);
  std::vector<uint8_t> region1 = std::vector<uint8_t>(64 * 1024);
};

TEST_F(KernelRegisterTest, KernelsWiderAndTallerThan64Run) {
  // 1x197: a ViT's pooling over its tokens, as Vela emits it.
  fill_ifm(197 * kDepth);
  for (Arch arch : {Arch::EthosU55, Arch::EthosU65}) {
    ASSERT_EQ(run(max_pool(1, 197, 1, 1, 1, 197).words, arch), Error::Ok);
    for (uint32_t c = 0; c < kDepth; ++c) {
      int8_t expected = -128;
      for (uint32_t x = 0; x < 197; ++x) expected = std::max(expected, ifm(x * kDepth + c));
      EXPECT_EQ(ofm(c), expected) << "channel " << c;
    }
  }
  // 300x1, stride 2 down the rows: two outputs.
  fill_ifm(302 * kDepth);
  ASSERT_EQ(run(max_pool(302, 1, 2, 1, 300, 1, /*stride y 2*/ 2u).words), Error::Ok);
  for (uint32_t oy = 0; oy < 2; ++oy) {
    for (uint32_t c = 0; c < kDepth; ++c) {
      int8_t expected = -128;
      for (uint32_t y = 0; y < 300; ++y) expected = std::max(expected, ifm((oy * 2 + y) * kDepth + c));
      EXPECT_EQ(ofm(oy * kDepth + c), expected) << "row " << oy << " channel " << c;
    }
  }
}

TEST_F(KernelRegisterTest, PaddingFieldsHold7And8Bits) {
  // 200 rows of kernel, 127 of them padding above and 1 below: the IFM has 72 rows.
  fill_ifm(72 * kDepth);
  ASSERT_EQ(run(max_pool(72, 1, 1, 1, 200, 1, 0, 127, 1).words), Error::Ok);
  EXPECT_EQ(ofm(0), *std::max_element(reinterpret_cast<const int8_t*>(region1.data()),
                                       reinterpret_cast<const int8_t*>(region1.data()) + 72 * kDepth));
  // 255 below is in range; 128 above and 256 below are not.
  EXPECT_EQ(run(max_pool(1, 1, 1, 1, 256, 1, 0, 0, 255).words), Error::Ok);
  EXPECT_EQ(run(max_pool(72, 1, 1, 1, 201, 1, 0, 128, 1).words), Error::NpuInvalidRegister);
  EXPECT_EQ(run(max_pool(1, 1, 1, 1, 257, 1, 0, 0, 256).words), Error::NpuInvalidRegister);
}

TEST_F(KernelRegisterTest, StridesUpTo4AndReservedBitsNamed) {
  // Stride 4 in x: low bit 0 and high bit 6 set. IFM 1x13, kernel 1x1, OFM 1x4.
  fill_ifm(13 * kDepth);
  ASSERT_EQ(run(max_pool(1, 13, 1, 4, 1, 1, (1u << 0) | (1u << 6)).words), Error::Ok);
  for (uint32_t ox = 0; ox < 4; ++ox) EXPECT_EQ(ofm(ox * kDepth), ifm(ox * 4 * kDepth));
  for (uint32_t reserved : {7u, 8u, 10u, 15u}) {
    EXPECT_EQ(run(max_pool(1, 13, 1, 4, 1, 1, 1u << reserved).words), Error::NpuInvalidRegister)
        << "bit " << reserved;
  }
}

TEST(KernelRegisterFields, FinishKernelChecksEveryField) {
  KernelGeometry k;
  EXPECT_EQ(finish_kernel(0xffff, 0, 0, 0, 0, 0, &k), Error::Ok);
  EXPECT_EQ(k.height, 65536u);
  EXPECT_EQ(finish_kernel(0x10000, 0, 0, 0, 0, 0, &k), Error::NpuInvalidRegister);
  EXPECT_EQ(finish_kernel(0, 0x10000, 0, 0, 0, 0, &k), Error::NpuInvalidRegister);
  EXPECT_EQ(finish_kernel(0, 0, 0, 128, 0, 0, &k), Error::NpuInvalidRegister);
  EXPECT_EQ(finish_kernel(0, 0, 0, 0, 0, 256, &k), Error::NpuInvalidRegister);
  k.dilation_x = 2;
  EXPECT_EQ(finish_kernel(0, 3, 127, 127, 255, 255, &k), Error::NpuInvalidRegister);  // 4 wide, dilation 2
  EXPECT_EQ(finish_kernel(0, 4, 127, 127, 255, 255, &k), Error::Ok);
  EXPECT_EQ(k.width, 3u);
}

}  // namespace
}  // namespace kiln::vnpu
