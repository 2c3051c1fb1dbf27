// The IFM rows a convolution/depthwise kernel reads, gathered once per operation into
// contiguous int16 memory: zero point subtracted, padding and upscale holes as zeros, any
// layout (NHWC or NHCWB16, tiles, upscaling) resolved. The inner loops then run over dense
// NHWC rows with no address generation, no bounds checks and no layout switches.
//
// Rows live in a ring of `span` slots (the dilated kernel height): moving one OFM row down
// gathers only the rows the kernel has not seen yet. Used for 8-bit IFMs, whose values
// minus the zero point (-255..255) fit int16, so the dot products can use 16-bit operands
// with 32-bit accumulation like the hardware's 8-bit datapath.
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/ops/conv_common.h"

namespace kiln::vnpu {

class IfmRows final {
 public:
  /// Allocates the ring (and a zero row for padding) from the op's scratch memory.
  /// OutOfResources if the work memory is too small.
  Error init(OpContext& ctx, const ConvSetup& s);

  /// Makes the rows of OFM row `oy` available; row(ky) is then the padded IFM row the
  /// kernel row ky reads: `padded_width` pixels of `depth` int16 values, pixel 0 being the
  /// leftmost padding column.
  void load_for(uint32_t oy);
  const int16_t* row(uint32_t ky) const { return rows_[ky]; }

  uint32_t padded_width() const { return padded_width_; }
  uint32_t depth() const { return depth_; }

 private:
  void gather(int32_t iy, int16_t* out) const;

  const ConvSetup* s_ = nullptr;
  int16_t* ring_ = nullptr;
  int16_t* zero_row_ = nullptr;
  int32_t* slot_row_ = nullptr;  // logical IFM row held by each slot (INT32_MIN: none)
  static constexpr uint32_t kMaxRows = 64;  // kernel rows of one convolution (init refuses more)
  const int16_t* rows_[kMaxRows] = {};
  uint32_t span_ = 0, padded_width_ = 0, depth_ = 0;
  size_t row_elems_ = 0;
};

}  // namespace kiln::vnpu
