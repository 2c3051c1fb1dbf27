// Builds Ethos-U55/U65 command streams by hand for the virtual NPU's tests.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/arm/vnpu/u55/commands.h"

namespace kiln::vnpu::testing {

using u55::Cmd0;
using u55::Cmd1;

class StreamBuilder {
 public:
  StreamBuilder& cmd0(Cmd0 code, uint32_t param = 0) {
    words.push_back(static_cast<uint32_t>(code) | (param << 16));
    return *this;
  }
  StreamBuilder& cmd1(Cmd1 code, uint32_t payload, uint32_t param = 0) {
    words.push_back(static_cast<uint32_t>(code) | kPayloadFlag | (param << 16));
    words.push_back(payload);
    return *this;
  }
  /// An NHWC int8 feature map of h x w x c at `base` in `region` (IFM, IFM2 or OFM).
  StreamBuilder& ifm(uint32_t region, uint32_t base, uint32_t h, uint32_t w, uint32_t c) {
    cmd0(Cmd0::IfmRegion, region).cmd1(Cmd1::IfmBase0, base);
    cmd0(Cmd0::IfmWidth0M1, w - 1).cmd0(Cmd0::IfmHeight0M1, h - 1).cmd0(Cmd0::IfmHeight1M1, h - 1);
    cmd0(Cmd0::IfmDepthM1, c - 1).cmd0(Cmd0::IfmPrecision, 1);
    return cmd1(Cmd1::IfmStrideX, c).cmd1(Cmd1::IfmStrideY, w * c).cmd1(Cmd1::IfmStrideC, 1);
  }
  StreamBuilder& ifm2(uint32_t region, uint32_t base, uint32_t h, uint32_t w, uint32_t c) {
    cmd0(Cmd0::Ifm2Region, region).cmd1(Cmd1::Ifm2Base0, base);
    cmd0(Cmd0::Ifm2Width0M1, w - 1).cmd0(Cmd0::Ifm2Height0M1, h - 1).cmd0(Cmd0::Ifm2Height1M1, h - 1);
    cmd0(Cmd0::Ifm2Precision, 1);
    return cmd1(Cmd1::Ifm2StrideX, c).cmd1(Cmd1::Ifm2StrideY, w * c).cmd1(Cmd1::Ifm2StrideC, 1);
  }
  StreamBuilder& ofm(uint32_t region, uint32_t base, uint32_t h, uint32_t w, uint32_t c,
                     bool nhcwb16 = false) {
    cmd0(Cmd0::OfmRegion, region).cmd1(Cmd1::OfmBase0, base);
    cmd0(Cmd0::OfmWidthM1, w - 1).cmd0(Cmd0::OfmHeightM1, h - 1).cmd0(Cmd0::OfmDepthM1, c - 1);
    cmd0(Cmd0::OfmWidth0M1, w - 1).cmd0(Cmd0::OfmHeight0M1, h - 1).cmd0(Cmd0::OfmHeight1M1, h - 1);
    // S8, format bits 6-7, global scaling (bit 8), rounding bits 14-15 = TFL.
    cmd0(Cmd0::OfmPrecision, 1u | (nhcwb16 ? 1u << 6 : 0u) | (1u << 8));
    if (nhcwb16) {
      const uint32_t bricks = (c + 15) / 16;
      return cmd1(Cmd1::OfmStrideX, 16).cmd1(Cmd1::OfmStrideY, w * 16 * bricks).cmd1(Cmd1::OfmStrideC, w * 16);
    }
    return cmd1(Cmd1::OfmStrideX, c).cmd1(Cmd1::OfmStrideY, w * c).cmd1(Cmd1::OfmStrideC, 1);
  }
  /// Unit output scale and the full int8 clip range.
  StreamBuilder& unit_output_stage() {
    cmd1(Cmd1::OfmScale, 1, 0).cmd1(Cmd1::OpaScale, 1, 0).cmd1(Cmd1::OpbScale, 1);
    return cmd0(Cmd0::ActivationMin, 0xff80).cmd0(Cmd0::ActivationMax, 0x7f);
  }

  std::vector<uint32_t> words;
};

}  // namespace kiln::vnpu::testing
