#include "backends/arm/vnpu/ops/ifm_rows.h"

#include <climits>
#include <cstring>

#include "runtime/platform/log.h"

namespace kiln::vnpu {

Error IfmRows::init(OpContext& ctx, const ConvSetup& s) {
  s_ = &s;
  if (s.k.height > kMaxRows) {
    KILN_LOG(Error, "convolution kernel height %u: the virtual NPU reads at most %u kernel rows", s.k.height,
             kMaxRows);
    return Error::NpuInvalidRegister;
  }
  depth_ = s.ifm_depth;
  span_ = (s.k.height - 1) * s.k.dilation_y + 1;
  padded_width_ = (s.ofm_width - 1) * s.k.stride_x + (s.k.width - 1) * s.k.dilation_x + 1;
  row_elems_ = size_t{padded_width_} * depth_;
  ring_ = ctx.scratch.allocate<int16_t>(row_elems_ * (span_ + 1));
  slot_row_ = ctx.scratch.allocate<int32_t>(span_);
  if (ring_ == nullptr || slot_row_ == nullptr) {
    KILN_LOG(Error, "work memory too small for %u IFM rows of %u x %u (%zu bytes free)",
             span_ + 1, padded_width_, depth_, ctx.scratch.free_bytes());
    return Error::OutOfResources;
  }
  zero_row_ = ring_ + row_elems_ * span_;
  std::memset(zero_row_, 0, row_elems_ * sizeof(int16_t));
  for (uint32_t i = 0; i < span_; ++i) slot_row_[i] = INT32_MIN;
  return Error::Ok;
}

void IfmRows::load_for(uint32_t oy) {
  const ConvSetup& s = *s_;
  const int32_t top = static_cast<int32_t>(oy * s.k.stride_y) - s.k.pad_top;
  for (uint32_t ky = 0; ky < s.k.height; ++ky) {
    const int32_t iy = top + static_cast<int32_t>(ky * s.k.dilation_y);
    if (iy < 0 || iy >= static_cast<int32_t>(s.ifm_height)) {
      rows_[ky] = zero_row_;
      continue;
    }
    const uint32_t slot = static_cast<uint32_t>(iy) % span_;
    int16_t* dst = ring_ + row_elems_ * slot;
    if (slot_row_[slot] != iy) {
      gather(iy, dst);
      slot_row_[slot] = iy;
    }
    rows_[ky] = dst;
  }
}

void IfmRows::gather(int32_t iy, int16_t* out) const {
  const ConvSetup& s = *s_;
  const FeatureMap& ifm = s.ifm;
  const int32_t zp = s.ifm_zp;
  const bool is_signed = ifm.is_signed();
  const uint32_t depth = depth_;
  for (uint32_t px = 0; px < padded_width_; ++px) {
    int16_t* o = out + size_t{px} * depth;
    const int32_t ix = static_cast<int32_t>(px) - s.k.pad_left;
    if (ix < 0 || ix >= static_cast<int32_t>(s.ifm_width)) {
      std::memset(o, 0, depth * sizeof(int16_t));
      continue;
    }
    uint32_t y = static_cast<uint32_t>(iy), x = static_cast<uint32_t>(ix);
    if (s.upscale == 2) {
      if (s.upscale_mode == UpscaleMode::Zeros && ((y | x) & 1u) != 0) {
        std::memset(o, 0, depth * sizeof(int16_t));  // a hole reads the zero point
        continue;
      }
      y >>= 1;
      x >>= 1;
    }
    const uint8_t* p = ifm.pixel(y, x);
    if (ifm.format() == DataFormat::Nhwc) {
      if (is_signed) {
        const int8_t* sp = reinterpret_cast<const int8_t*>(p);
        for (uint32_t c = 0; c < depth; ++c) o[c] = static_cast<int16_t>(sp[c] - zp);
      } else {
        for (uint32_t c = 0; c < depth; ++c) o[c] = static_cast<int16_t>(p[c] - zp);
      }
    } else {
      // NHCWB16: bricks of 16 channels, stride_c apart.
      for (uint32_t c0 = 0; c0 < depth; c0 += 16) {
        const uint8_t* brick = p + ifm.channel_offset(c0);
        const uint32_t n = depth - c0 < 16 ? depth - c0 : 16;
        if (is_signed) {
          const int8_t* sp = reinterpret_cast<const int8_t*>(brick);
          for (uint32_t c = 0; c < n; ++c) o[c0 + c] = static_cast<int16_t>(sp[c] - zp);
        } else {
          for (uint32_t c = 0; c < n; ++c) o[c0 + c] = static_cast<int16_t>(brick[c] - zp);
        }
      }
    }
  }
}

}  // namespace kiln::vnpu
