// Address generation for IFM, IFM2 and OFM: up to four tiles (base0 top-left, base1
// top-right, base2 bottom-left, base3 bottom-right) in NHWC or NHCWB16 (16-channel bricks)
// with strides from the registers, or a dense NHWC buffer inside the NPU (chaining buffers,
// kept accumulators). Every tile's extent is checked against its memory once, when the
// feature map is bound, so element reads and writes need no further checks.
//
// An OFM may be transposed or reversed on the way to memory (Ethos-U85): write() takes
// logical (y, x, c) and stores at the permuted position; the pixel pointers are only valid
// for a map without permutation (has_plain_layout()).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/arm/vnpu/op_desc.h"
#include "backends/arm/vnpu/virtual_npu.h"
#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace kiln::vnpu {

class FeatureMap final {
 public:
  /// Binds the feature map `fm` (storage Memory) with the logical extent the operation will
  /// access (height x width x depth) to its region. `output`: the map is written (the region
  /// must not be read-only). NpuRegionOutOfBounds / NpuRegionReadOnly / NpuInvalidRegister.
  Error bind(const FmDesc& fm, const char* name, Span<const Region> regions, uint32_t height,
             uint32_t width, uint32_t depth, bool output);
  /// Binds a dense NHWC buffer of `type` (a chaining buffer or saved accumulators).
  void bind_dense(uint8_t* data, ElemType type, uint32_t height, uint32_t width, uint32_t depth);
  /// Writes go through the Ethos-U85 OFM transpose/reverse (the bound extent is the memory
  /// one, i.e. already permuted; `height/width/depth` are the logical OFM extent).
  void set_permutation(OfmTranspose transpose, OfmReverse reverse, uint32_t height, uint32_t width,
                       uint32_t depth);

  int64_t read(uint32_t y, uint32_t x, uint32_t c) const {
    expect_in_extent(y, x, c);
    return load(data_ + offset(y, x, c));
  }
  void write(uint32_t y, uint32_t x, uint32_t c, int64_t value) {
    if (permuted_) permute(&y, &x, &c);
    expect_in_extent(y, x, c);
    store(data_ + offset(y, x, c), value);
  }
  /// Pointer to element (y, x, 0); in NHWC the channels follow contiguously.
  const uint8_t* pixel(uint32_t y, uint32_t x) const {
    expect_in_extent(y, x, 0);
    return data_ + offset(y, x, 0);
  }
  uint8_t* mutable_pixel(uint32_t y, uint32_t x) {
    expect_in_extent(y, x, 0);
    return data_ + offset(y, x, 0);
  }
  /// Byte offset of channel c from its pixel (NHWC: packed; NHCWB16: brick, then lane).
  size_t channel_offset(uint32_t c) const {
    if (format_ == DataFormat::Nhwc) return size_t{c} * elem_size_;
    return (c >> 4) * stride_c_ + (c & 15u) * elem_size_;
  }
  /// Reads / stores one element (already clipped to the type) at a pixel pointer plus a
  /// channel offset.
  int64_t load(const uint8_t* p) const {
    switch (type_) {
      case ElemType::U8: return p[0];
      case ElemType::S8: return static_cast<int8_t>(p[0]);
      case ElemType::U16: return static_cast<uint16_t>(p[0] | (p[1] << 8));
      case ElemType::S16: return static_cast<int16_t>(p[0] | (p[1] << 8));
      case ElemType::S32:
        return static_cast<int32_t>(p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24));
      default: {
        uint64_t v = 0;
        for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
        return static_cast<int64_t>(v);
      }
    }
  }
  void store(uint8_t* p, int64_t value) const {
    uint64_t v = static_cast<uint64_t>(value);
    for (uint32_t i = 0; i < elem_size_; ++i, v >>= 8) p[i] = static_cast<uint8_t>(v);
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

  ElemType type() const { return type_; }
  uint32_t elem_size() const { return elem_size_; }
  bool is_signed() const { return elem_signed(type_); }
  bool has_plain_layout() const { return !permuted_; }
  DataFormat format() const { return format_; }
  /// Region index for the byte counters (kMaxRegions for memory inside the NPU).
  uint32_t counter_index() const { return counter_index_; }
  /// Bytes an operation touching the whole logical extent moves (for the counters).
  uint64_t bytes() const { return uint64_t{height_} * width_ * depth_ * elem_size_; }

 private:
  void permute(uint32_t* y, uint32_t* x, uint32_t* c) const;
  /// Bytes from a pixel to the end of its last channel (depth > 0).
  uint64_t channel_bytes(uint32_t depth) const;
  /// bind() checked the bound extent against the region once, so accesses need no checks:
  /// an operation must stay inside the extent it bound. Debug builds (the sanitizer and fuzz
  /// presets) verify that on every access and abort on a vNPU bug; release builds trust it.
  void expect_in_extent(uint32_t y, uint32_t x, uint32_t c) const {
#ifndef NDEBUG
    if (y >= height_ || x >= width_ || (c >= depth_ && !(c == 0 && depth_ == 0))) {
      extent_violation(y, x, c);
    }
#else
    (void)y, (void)x, (void)c;
#endif
  }
  [[noreturn]] void extent_violation(uint32_t y, uint32_t x, uint32_t c) const;

  uint8_t* data_ = nullptr;
  size_t base_[4] = {};
  uint32_t height0_ = 0, height1_ = 0, width0_ = 0;
  uint32_t height_ = 0, width_ = 0, depth_ = 0;
  size_t stride_x_ = 0, stride_y_ = 0, stride_c_ = 0;
  uint32_t elem_size_ = 1;
  ElemType type_ = ElemType::S8;
  DataFormat format_ = DataFormat::Nhwc;
  uint32_t counter_index_ = 0;
  bool permuted_ = false;
  OfmTranspose transpose_ = OfmTranspose::Hwc;
  OfmReverse reverse_ = OfmReverse::None;
  uint32_t logical_h_ = 0, logical_w_ = 0, logical_d_ = 0;
};

/// The memory extent of an OFM of logical extent h x w x d written with `transpose`.
void permuted_extent(OfmTranspose transpose, uint32_t h, uint32_t w, uint32_t d, uint32_t* mh,
                     uint32_t* mw, uint32_t* md);

}  // namespace kiln::vnpu
