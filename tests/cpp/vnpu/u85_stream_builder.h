// Builds Ethos-U85 command streams by hand for the virtual NPU's tests (register layouts as
// in backends/arm/vnpu/u85/decode.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "backends/arm/vnpu/u85/commands.h"

namespace kiln::vnpu::testing {

class U85StreamBuilder {
 public:
  using Cmd0 = u85::Cmd0;
  using Cmd1 = u85::Cmd1;

  U85StreamBuilder& cmd0(Cmd0 code, uint32_t param = 0) {
    words.push_back(static_cast<uint32_t>(code) | (param << 16));
    return *this;
  }
  U85StreamBuilder& cmd1(Cmd1 code, uint32_t payload, uint32_t param = 0) {
    words.push_back(static_cast<uint32_t>(code) | kPayloadFlag | (param << 16));
    words.push_back(payload);
    return *this;
  }
  /// An int8 NHWC input (IFM or IFM2) of h x w x c at `base` in `region`.
  U85StreamBuilder& input(bool second, uint32_t region, uint32_t base, uint32_t h, uint32_t w, uint32_t c,
                          uint32_t storage = 0) {
    const uint32_t precision = 1u | (storage << 14);  // signed 8-bit NHWC
    if (second) {
      cmd0(Cmd0::Ifm2Region, region).cmd1(Cmd1::Ifm2Base0, base).cmd0(Cmd0::Ifm2Precision, precision);
      cmd0(Cmd0::Ifm2Width0M1, w - 1).cmd0(Cmd0::Ifm2Height0M1, h - 1).cmd0(Cmd0::Ifm2Height1M1, h - 1);
      cmd0(Cmd0::Ifm2Broadcast, 0).cmd0(Cmd0::Ifm2ZeroPoint, 0);
      return cmd1(Cmd1::Ifm2StrideX, c).cmd1(Cmd1::Ifm2StrideY, w * c).cmd1(Cmd1::Ifm2StrideC, 1);
    }
    cmd0(Cmd0::IfmRegion, region).cmd1(Cmd1::IfmBase0, base).cmd0(Cmd0::IfmPrecision, precision);
    cmd0(Cmd0::IfmWidth0M1, w - 1).cmd0(Cmd0::IfmHeight0M1, h - 1).cmd0(Cmd0::IfmHeight1M1, h - 1);
    cmd0(Cmd0::IfmDepthM1, c - 1).cmd0(Cmd0::IfmBroadcast, 0).cmd0(Cmd0::IfmZeroPoint, 0);
    return cmd1(Cmd1::IfmStrideX, c).cmd1(Cmd1::IfmStrideY, w * c).cmd1(Cmd1::IfmStrideC, 1);
  }
  /// An int8 NHWC OFM of h x w x c (the extent before any transpose; the memory strides are
  /// those of the transposed shape mh x mw x mc), global scaling.
  U85StreamBuilder& ofm(uint32_t region, uint32_t base, uint32_t h, uint32_t w, uint32_t c, uint32_t storage = 0,
                        uint32_t transpose = 0, uint32_t mw = 0, uint32_t mc = 0) {
    if (mw == 0) mw = w;
    if (mc == 0) mc = c;
    cmd0(Cmd0::OfmPrecision, 1u | (1u << 8) | (transpose << 11) | (storage << 14));
    cmd0(Cmd0::OfmRegion, region).cmd1(Cmd1::OfmBase0, base);
    cmd0(Cmd0::OfmWidthM1, w - 1).cmd0(Cmd0::OfmHeightM1, h - 1).cmd0(Cmd0::OfmDepthM1, c - 1);
    cmd0(Cmd0::OfmWidth0M1, mw - 1).cmd0(Cmd0::OfmHeight0M1, 0xffff).cmd0(Cmd0::OfmHeight1M1, 0xffff);
    cmd0(Cmd0::OfmZeroPoint, 0);
    return cmd1(Cmd1::OfmStrideX, mc).cmd1(Cmd1::OfmStrideY, mw * mc).cmd1(Cmd1::OfmStrideC, 1);
  }
  /// Unit scales (natural rounding), no clipping beyond the type, a microblock the 256-MAC
  /// configuration has (1x2).
  U85StreamBuilder& unit_scales() {
    const uint32_t natural = 1u << 13;
    cmd1(Cmd1::OfmScale, 1, natural).cmd1(Cmd1::IfmScale, 1, natural).cmd1(Cmd1::Ifm2Scale, 1, natural);
    return cmd0(Cmd0::Activation, 1u << 12).cmd0(Cmd0::AccFormat, 1u << 8);
  }
  U85StreamBuilder& elementwise(u85::ElementwiseMode mode) {
    return cmd0(Cmd0::OpElementwise, static_cast<uint32_t>(mode));
  }
  /// A 1D DMA of `length` bytes between regions.
  U85StreamBuilder& dma(uint32_t src_region, uint32_t src, uint32_t dst_region, uint32_t dst, uint32_t length) {
    cmd0(Cmd0::Dma0SrcRegion, src_region).cmd0(Cmd0::Dma0DstRegion, dst_region);
    cmd1(Cmd1::Dma0Src, src).cmd1(Cmd1::Dma0Dst, dst).cmd1(Cmd1::Dma0Len, length);
    return cmd0(Cmd0::Dma0Size0, 1).cmd0(Cmd0::OpDmaStart);
  }
  /// NPU_OP_BRANCH to word `target` (always, or if the last result flag is set).
  U85StreamBuilder& branch(uint32_t target_word, bool conditional = false) {
    return cmd1(Cmd1::OpBranch, target_word * 4, conditional ? 1u : 0u);
  }
  U85StreamBuilder& stop() { return cmd0(Cmd0::OpStop, 0xffff); }
  uint32_t position() const { return static_cast<uint32_t>(words.size()); }

  std::vector<uint32_t> words;
};

}  // namespace kiln::vnpu::testing
