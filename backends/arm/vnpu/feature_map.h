// Address generation for IFM, IFM2 and OFM: up to four tiles (base0 top-left, base1
// top-right, base2 bottom-left, base3 bottom-right) in NHWC or NHCWB16 (16-channel bricks)
// with strides from the registers. Every tile's extent is checked against its region once,
// when the feature map is bound, so element reads and writes need no further checks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/arm/vnpu/commands.h"
#include "backends/arm/vnpu/register_file.h"
#include "backends/arm/vnpu/virtual_npu.h"
#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace kiln::vnpu {

enum class FeatureMapKind : uint8_t { Ifm, Ifm2, Ofm };

class FeatureMap final {
 public:
  /// Binds the feature map `kind` described by the registers, with the given logical extent
  /// (height x width x depth, as the operation will access it), to its region. Fails with
  /// NpuRegionOutOfBounds or NpuInvalidRegister (precision, region index).
  Error bind(FeatureMapKind kind, const RegisterFile& regs, Span<const Region> regions,
             uint32_t height, uint32_t width, uint32_t depth);

  int32_t read(uint32_t y, uint32_t x, uint32_t c) const {
    const uint8_t* p = data_ + offset(y, x, c);
    switch (type_) {
      case kU8: return p[0];
      case kS8: return static_cast<int8_t>(p[0]);
      case kU16: return static_cast<uint16_t>(p[0] | (p[1] << 8));
      case kS16: return static_cast<int16_t>(p[0] | (p[1] << 8));
      default: return static_cast<int32_t>(p[0] | (p[1] << 8) | (p[2] << 16) |
                                           (static_cast<uint32_t>(p[3]) << 24));
    }
  }
  void write(uint32_t y, uint32_t x, uint32_t c, int32_t value) {
    uint8_t* p = data_ + offset(y, x, c);
    uint32_t v = static_cast<uint32_t>(value);
    p[0] = static_cast<uint8_t>(v);
    if (elem_size_ >= 2) p[1] = static_cast<uint8_t>(v >> 8);
    if (elem_size_ == 4) {
      p[2] = static_cast<uint8_t>(v >> 16);
      p[3] = static_cast<uint8_t>(v >> 24);
    }
  }
  /// Pointer to element (y, x, 0); in NHWC the channels follow contiguously.
  const uint8_t* pixel(uint32_t y, uint32_t x) const { return data_ + offset(y, x, 0); }
  uint8_t* mutable_pixel(uint32_t y, uint32_t x) { return data_ + offset(y, x, 0); }
  /// Byte offset of channel c from its pixel (NHWC: packed; NHCWB16: brick, then lane).
  size_t channel_offset(uint32_t c) const {
    if (format_ == DataFormat::Nhwc) return size_t{c} * elem_size_;
    return (c >> 4) * stride_c_ + (c & 15u) * elem_size_;
  }
  /// Stores `value` (already clipped to the type) at `p`, a pixel pointer plus a channel
  /// offset.
  void store(uint8_t* p, int32_t value) const {
    const uint32_t v = static_cast<uint32_t>(value);
    p[0] = static_cast<uint8_t>(v);
    if (elem_size_ >= 2) p[1] = static_cast<uint8_t>(v >> 8);
    if (elem_size_ == 4) {
      p[2] = static_cast<uint8_t>(v >> 16);
      p[3] = static_cast<uint8_t>(v >> 24);
    }
  }

  size_t offset(uint32_t y, uint32_t x, uint32_t c) const {
    int t = 0;
    if (x >= width0_) {
      x -= width0_;
      t = 1;
      if (y >= height1_) {
        y -= height1_;
        t = 3;
      }
    } else if (y >= height0_) {
      y -= height0_;
      t = 2;
    }
    size_t o = base_[t] + y * stride_y_ + x * stride_x_;
    if (format_ == DataFormat::Nhwc) return o + c * elem_size_;
    return o + (c >> 4) * stride_c_ + (c & 15u) * elem_size_;
  }

  uint32_t elem_size() const { return elem_size_; }
  bool is_signed() const { return type_ == kS8 || type_ == kS16 || type_ == kS32; }
  bool contiguous_channels() const { return format_ == DataFormat::Nhwc && stride_c_ == elem_size_; }
  DataFormat format() const { return format_; }
  uint8_t region() const { return region_; }
  /// Bytes an operation touching the whole logical extent moves (for the counters).
  uint64_t bytes() const { return uint64_t{height_} * width_ * depth_ * elem_size_; }
  int32_t type_min() const;
  int32_t type_max() const;

 private:
  enum Type : uint8_t { kU8, kS8, kU16, kS16, kS32 };
  uint8_t* data_ = nullptr;
  size_t base_[4] = {};
  uint32_t height0_ = 0, height1_ = 0, width0_ = 0;
  uint32_t height_ = 0, width_ = 0, depth_ = 0;
  size_t stride_x_ = 0, stride_y_ = 0, stride_c_ = 0;
  uint32_t elem_size_ = 1;
  Type type_ = kS8;
  DataFormat format_ = DataFormat::Nhwc;
  uint8_t region_ = 0;
};

}  // namespace kiln::vnpu
