// Setup shared by convolution and depthwise convolution (kernel geometry, IFM extent with
// upscaling, feature maps, per-channel scales, dense weights, output stage), and the
// epilogue every accumulating operation shares: accumulators in (reset, kept by the previous
// operation, loaded from IFM2) → bias and output stage → OFM, or accumulators kept for the
// next operation.
#pragma once

#include "backends/arm/vnpu/ops/op_context.h"
#include "backends/arm/vnpu/ops/wrapping.h"

namespace kiln::vnpu {

/// Where an accumulating operation's results go.
class Epilogue final {
 public:
  /// Binds the OFM (or the kept accumulators), the initial accumulators and the output
  /// stage. `scales` must have the op's OFM depth entries.
  Error init(OpContext& ctx, const ChannelScales& scales);

  /// True when results can be stored straight into plain OFM pixels (no accumulator
  /// hand-over, no transpose/reverse): the fast paths use pixel()/store_pixel().
  bool direct() const { return direct_; }
  /// Output value of channel c for accumulator `acc` (bias and output stage applied).
  int64_t output(uint32_t c, int64_t acc) const {
    return stage_.finish(scale_value(stage_.before_scaling(wrapping_add(acc, scales_.bias[c])), scales_.scale[c]));
  }
  uint8_t* pixel(uint32_t y, uint32_t x) { return ofm_.mutable_pixel(y, x); }
  void store_pixel(uint8_t* px, uint32_t c, int64_t acc) { ofm_.store(px + ofm_.channel_offset(c), output(c, acc)); }
  /// The general path: element (y, x, c) with accumulator `acc` (this op's sum).
  void put(uint32_t y, uint32_t x, uint32_t c, int64_t acc) {
    const size_t i = (size_t{y} * width_ + x) * depth_ + c;
    if (initial_ != nullptr) acc = wrapping_add(acc, initial_[i]);
    if (kept_ != nullptr) {
      kept_[i] = acc;
      return;
    }
    ofm_.write(y, x, c, output(c, acc));
  }
  /// Bytes written, for the counters (after the op ran).
  void count(OpContext& ctx) const;
  const FeatureMap& ofm() const { return ofm_; }
  const OutputStage& stage() const { return stage_; }

 private:
  FeatureMap ofm_;
  bool bound_ = false;
  bool direct_ = false;
  OutputStage stage_;
  ChannelScales scales_{};
  const int64_t* initial_ = nullptr;
  int64_t* kept_ = nullptr;
  uint32_t width_ = 0, depth_ = 0;
};

struct ConvSetup {
  KernelGeometry k;
  uint32_t ofm_height, ofm_width, ofm_depth;
  uint32_t ifm_depth;
  /// Logical IFM extent the kernel reads (after upscaling).
  uint32_t ifm_height, ifm_width;
  /// 1, or 2 when the IFM is upscaled (nearest or zeros).
  uint32_t upscale;
  UpscaleMode upscale_mode;
  int32_t ifm_zp;
  FeatureMap ifm;
  ChannelScales scales;
  Epilogue out;
  /// Dense weights [ofm][ky][kx][ifm] (ifm depth 1 for depthwise), zero point removed.
  const int16_t* weights;
};

Error setup_conv(OpContext& ctx, bool depthwise, ConvSetup* s);

/// Whether the op can use the gathered int16 IFM rows (ops/ifm_rows.h): an 8-bit IFM whose
/// values minus the zero point stay within 9 bits, and weights within 9 bits.
inline bool uses_int16_rows(const ConvSetup& s) {
  return s.ifm.elem_size() == 1 && s.ifm_zp >= -256 && s.ifm_zp <= 256;
}

/// IFM value at logical (iy, ix, c) with upscaling; false for a zero-upscale hole (which
/// reads the zero point, i.e. contributes nothing).
inline bool read_upscaled(const ConvSetup& s, int32_t iy, int32_t ix, uint32_t c, int64_t* v) {
  uint32_t y = static_cast<uint32_t>(iy), x = static_cast<uint32_t>(ix);
  if (s.upscale == 2) {
    if (s.upscale_mode == UpscaleMode::Zeros && ((y | x) & 1u) != 0) return false;
    y >>= 1;
    x >>= 1;
  }
  *v = s.ifm.read(y, x, c);
  return true;
}

}  // namespace kiln::vnpu
