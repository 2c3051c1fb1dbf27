#include "backends/arm/vnpu/feature_map.h"

#include "runtime/platform/log.h"
#include "runtime/platform/platform.h"

namespace kiln::vnpu {
namespace {

uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

}  // namespace

void permuted_extent(OfmTranspose transpose, uint32_t h, uint32_t w, uint32_t d, uint32_t* mh,
                     uint32_t* mw, uint32_t* md) {
  switch (transpose) {
    case OfmTranspose::Hwc: *mh = h; *mw = w; *md = d; break;
    case OfmTranspose::Whc: *mh = w; *mw = h; *md = d; break;
    case OfmTranspose::Hcw: *mh = h; *mw = d; *md = w; break;
    case OfmTranspose::Wch: *mh = w; *mw = d; *md = h; break;
    case OfmTranspose::Chw: *mh = d; *mw = h; *md = w; break;
    case OfmTranspose::Cwh: *mh = d; *mw = w; *md = h; break;
  }
}

void FeatureMap::set_permutation(OfmTranspose transpose, OfmReverse reverse, uint32_t height,
                                 uint32_t width, uint32_t depth) {
  transpose_ = transpose;
  reverse_ = reverse;
  logical_h_ = height;
  logical_w_ = width;
  logical_d_ = depth;
  permuted_ = transpose != OfmTranspose::Hwc || reverse != OfmReverse::None;
}

void FeatureMap::permute(uint32_t* y, uint32_t* x, uint32_t* c) const {
  switch (reverse_) {
    case OfmReverse::None: break;
    case OfmReverse::H: *y = logical_h_ - 1u - *y; break;
    case OfmReverse::W: *x = logical_w_ - 1u - *x; break;
    case OfmReverse::C: *c = logical_d_ - 1u - *c; break;
  }
  const uint32_t h = *y, w = *x, d = *c;
  switch (transpose_) {
    case OfmTranspose::Hwc: break;
    case OfmTranspose::Whc: *y = w; *x = h; *c = d; break;
    case OfmTranspose::Hcw: *y = h; *x = d; *c = w; break;
    case OfmTranspose::Wch: *y = w; *x = d; *c = h; break;
    case OfmTranspose::Chw: *y = d; *x = h; *c = w; break;
    case OfmTranspose::Cwh: *y = d; *x = w; *c = h; break;
  }
}

void FeatureMap::extent_violation(uint32_t y, uint32_t x, uint32_t c) const {
  KILN_LOG(Fatal, "virtual NPU bug: element (%u, %u, %u) lies outside the bound extent %ux%ux%u", y, x, c,
           height_, width_, depth_);
  kiln_pal_abort();
}

void FeatureMap::bind_dense(uint8_t* data, ElemType type, uint32_t height, uint32_t width,
                            uint32_t depth) {
  *this = FeatureMap();
  data_ = data;
  type_ = type;
  elem_size_ = elem_bytes(type);
  format_ = DataFormat::Nhwc;
  height_ = height;
  width_ = width;
  depth_ = depth;
  width0_ = width;
  height0_ = height1_ = height;
  stride_x_ = size_t{depth} * elem_size_;
  stride_y_ = stride_x_ * width;
  stride_c_ = elem_size_;
  counter_index_ = kMaxRegions;
}

uint64_t FeatureMap::channel_bytes(uint32_t depth) const {
  if (format_ == DataFormat::Nhwc) return uint64_t{depth} * elem_size_;
  // NHCWB16: the last brick holds the remaining channels; a brick before it holds 16, and
  // reaches further than the last one when the C stride is shorter than a brick (a hostile
  // stream's registers may say so).
  const uint64_t last_brick = (depth - 1) >> 4;
  const uint64_t last = last_brick * stride_c_ + (((depth - 1) & 15u) + 1u) * elem_size_;
  if (last_brick == 0) return last;
  const uint64_t full = (last_brick - 1) * stride_c_ + 16u * elem_size_;
  return full > last ? full : last;
}

Error FeatureMap::bind(const FmDesc& fm, const char* name, Span<const Region> regions,
                       uint32_t height, uint32_t width, uint32_t depth, bool output) {
  *this = FeatureMap();
  type_ = fm.type;
  elem_size_ = elem_bytes(fm.type);
  format_ = fm.format;
  if (fm.region >= regions.size() || fm.region >= kMaxRegions) {
    KILN_LOG(Error, "%s region %u: only %zu regions given", name, fm.region, regions.size());
    return Error::NpuRegionOutOfBounds;
  }
  const Region& mem = regions[fm.region];
  if (output && mem.read_only) {
    KILN_LOG(Error, "%s is in read-only region %u", name, fm.region);
    return Error::NpuRegionReadOnly;
  }
  counter_index_ = fm.region;
  data_ = mem.data;
  height_ = height;
  width_ = width;
  depth_ = depth;
  width0_ = fm.width0;
  height0_ = fm.height0;
  height1_ = fm.height1;
  stride_x_ = static_cast<size_t>(fm.stride_x);
  stride_y_ = static_cast<size_t>(fm.stride_y);
  // The C stride steps between 16-channel bricks; an NHWC map's channels are packed and the
  // NPU ignores the register. Vela 5.1 leaves other values there (4 on an 8-bit map written
  // transposed after a 32-bit one: the channels would overlap the rows if it counted).
  const uint64_t stride_c = format_ == DataFormat::Nhwc ? elem_size_ : fm.stride_c;
  stride_c_ = static_cast<size_t>(stride_c);
  for (uint32_t t = 0; t < 4; ++t) base_[t] = static_cast<size_t>(fm.base[t]);
  if (height == 0 || width == 0 || depth == 0) return Error::Ok;
  if (fm.stride_x > (uint64_t{1} << 40) || fm.stride_y > (uint64_t{1} << 40) || stride_c > (uint64_t{1} << 40)) {
    KILN_LOG(Error, "%s strides %llu/%llu/%llu exceed the 40-bit address space", name,
             static_cast<unsigned long long>(fm.stride_y), static_cast<unsigned long long>(fm.stride_x),
             static_cast<unsigned long long>(stride_c));
    return Error::NpuRegionOutOfBounds;
  }

  // Extent of each tile that the logical area touches: (rows, cols).
  const uint32_t left_w = min_u32(width, width0_);
  const uint32_t right_w = width > width0_ ? width - width0_ : 0;
  const uint32_t tile_rows[4] = {min_u32(height, height0_), min_u32(height, height1_),
                                 height > height0_ ? height - height0_ : 0,
                                 height > height1_ ? height - height1_ : 0};
  const uint32_t tile_cols[4] = {left_w, right_w, left_w, right_w};
  const uint64_t channel_extent = channel_bytes(depth);
  for (int t = 0; t < 4; ++t) {
    if (tile_rows[t] == 0 || tile_cols[t] == 0) continue;
    const uint64_t end = uint64_t{fm.base[t]} + uint64_t{tile_rows[t] - 1} * fm.stride_y +
                         uint64_t{tile_cols[t] - 1} * fm.stride_x + channel_extent;
    if (data_ == nullptr || fm.base[t] > mem.size || end > mem.size) {
      KILN_LOG(Error,
               "%s tile %d (base 0x%llx, %ux%ux%u, strides y %zu x %zu c %zu) ends at 0x%llx, "
               "beyond region %u of %zu bytes",
               name, t, static_cast<unsigned long long>(fm.base[t]), tile_rows[t], tile_cols[t], depth,
               stride_y_, stride_x_, stride_c_, static_cast<unsigned long long>(end), fm.region, mem.size);
      return Error::NpuRegionOutOfBounds;
    }
  }
  return Error::Ok;
}

}  // namespace kiln::vnpu
