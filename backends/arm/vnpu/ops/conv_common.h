// Setup shared by convolution and depthwise convolution: kernel geometry, IFM extent (with
// upscaling), feature maps, per-channel scales, dense weights, output stage.
#pragma once

#include "backends/arm/vnpu/ops/op_context.h"

namespace kiln::vnpu {

struct ConvSetup {
  KernelGeometry k;
  OfmShape ofm_shape;
  uint32_t ifm_depth;
  /// Logical IFM extent the kernel reads (after upscaling).
  uint32_t ifm_height, ifm_width;
  /// 1, or 2 when the IFM is upscaled (nearest or transpose).
  uint32_t upscale;
  UpscaleMode upscale_mode;
  int32_t ifm_zp;
  FeatureMap ifm, ofm;
  ChannelScales scales;
  OutputStage stage;
  const int16_t* weights;
};

Error setup_conv(OpContext& ctx, bool depthwise, ConvSetup* s);

/// Whether the op can use the gathered int16 IFM rows (ops/ifm_rows.h): an 8-bit IFM whose
/// values minus the zero point stay within 9 bits.
inline bool uses_int16_rows(const ConvSetup& s) {
  return s.ifm.elem_size() == 1 && s.ifm_zp >= -256 && s.ifm_zp <= 256;
}

/// IFM value at logical (iy, ix, c) with upscaling; false for a transpose-upscale hole
/// (which reads the zero point, i.e. contributes nothing).
inline bool read_upscaled(const ConvSetup& s, int32_t iy, int32_t ix, uint32_t c, int32_t* v) {
  uint32_t y = static_cast<uint32_t>(iy), x = static_cast<uint32_t>(ix);
  if (s.upscale == 2) {
    if (s.upscale_mode == UpscaleMode::Transpose && ((y | x) & 1u) != 0) return false;
    y >>= 1;
    x >>= 1;
  }
  *v = s.ifm.read(y, x, c);
  return true;
}

}  // namespace kiln::vnpu
