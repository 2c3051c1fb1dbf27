#include "backends/arm/vnpu/feature_map.h"

#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

struct FeatureMapRegisters {
  Cmd0 region, precision, width0, height0, height1;
  Cmd1 base0, stride_x, stride_y, stride_c;
  const char* name;
};

constexpr FeatureMapRegisters kIfm = {Cmd0::IfmRegion, Cmd0::IfmPrecision, Cmd0::IfmWidth0M1,
                                      Cmd0::IfmHeight0M1, Cmd0::IfmHeight1M1, Cmd1::IfmBase0,
                                      Cmd1::IfmStrideX, Cmd1::IfmStrideY, Cmd1::IfmStrideC,
                                      "IFM"};
constexpr FeatureMapRegisters kIfm2 = {Cmd0::Ifm2Region, Cmd0::Ifm2Precision, Cmd0::Ifm2Width0M1,
                                       Cmd0::Ifm2Height0M1, Cmd0::Ifm2Height1M1, Cmd1::Ifm2Base0,
                                       Cmd1::Ifm2StrideX, Cmd1::Ifm2StrideY, Cmd1::Ifm2StrideC,
                                       "IFM2"};
constexpr FeatureMapRegisters kOfm = {Cmd0::OfmRegion, Cmd0::OfmPrecision, Cmd0::OfmWidth0M1,
                                      Cmd0::OfmHeight0M1, Cmd0::OfmHeight1M1, Cmd1::OfmBase0,
                                      Cmd1::OfmStrideX, Cmd1::OfmStrideY, Cmd1::OfmStrideC,
                                      "OFM"};

uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

}  // namespace

int32_t FeatureMap::type_min() const {
  switch (type_) {
    case kU8: case kU16: return 0;
    case kS8: return -128;
    case kS16: return -32768;
    default: return INT32_MIN;
  }
}

int32_t FeatureMap::type_max() const {
  switch (type_) {
    case kU8: return 255;
    case kS8: return 127;
    case kU16: return 65535;
    case kS16: return 32767;
    default: return INT32_MAX;
  }
}

Error FeatureMap::bind(FeatureMapKind kind, const RegisterFile& regs, Span<const Region> regions,
                       uint32_t height, uint32_t width, uint32_t depth) {
  const FeatureMapRegisters& r =
      kind == FeatureMapKind::Ifm ? kIfm : (kind == FeatureMapKind::Ifm2 ? kIfm2 : kOfm);
  const uint32_t precision = regs.get(r.precision);
  // IFM/IFM2: bit 0 signed, bits 2-3 size (8/16/32 bits). OFM: bit 0 signed, bits 1-2 size.
  const uint32_t size_code =
      kind == FeatureMapKind::Ofm ? (precision >> 1) & 3u : (precision >> 2) & 3u;
  const bool is_signed = (precision & 1u) != 0;
  if (size_code == 0) {
    type_ = is_signed ? kS8 : kU8;
    elem_size_ = 1;
  } else if (size_code == 1) {
    type_ = is_signed ? kS16 : kU16;
    elem_size_ = 2;
  } else if (size_code == 2 && is_signed) {
    type_ = kS32;
    elem_size_ = 4;
  } else {
    KILN_LOG(Error, "%s precision 0x%x is not supported", r.name, precision);
    return Error::NpuInvalidRegister;
  }
  const uint32_t format = (precision >> 6) & 3u;
  if (format > 1) {
    KILN_LOG(Error, "%s format %u is neither NHWC nor NHCWB16", r.name, format);
    return Error::NpuInvalidRegister;
  }
  format_ = static_cast<DataFormat>(format);

  region_ = static_cast<uint8_t>(regs.get(r.region) & 0xff);
  if (region_ >= regions.size() || region_ >= kMaxRegions) {
    KILN_LOG(Error, "%s region %u: only %zu regions given", r.name, region_, regions.size());
    return Error::NpuRegionOutOfBounds;
  }
  const Region& mem = regions[region_];
  if (kind == FeatureMapKind::Ofm && mem.read_only) {
    KILN_LOG(Error, "OFM is in read-only region %u", region_);
    return Error::NpuRegionReadOnly;
  }
  data_ = mem.data;
  height_ = height;
  width_ = width;
  depth_ = depth;
  width0_ = regs.get(r.width0) + 1u;
  height0_ = regs.get(r.height0) + 1u;
  height1_ = regs.get(r.height1) + 1u;
  stride_x_ = regs.get(r.stride_x);
  stride_y_ = regs.get(r.stride_y);
  stride_c_ = regs.get(r.stride_c);
  const uint32_t base0 = static_cast<uint32_t>(r.base0);
  for (uint32_t t = 0; t < 4; ++t) {
    base_[t] = regs.get(static_cast<Cmd1>(base0 + t));
  }
  if (height == 0 || width == 0 || depth == 0) return Error::Ok;
  if (format_ == DataFormat::Nhwc && stride_c_ != 0 && stride_c_ != elem_size_) {
    // Channels of an NHWC map are always packed; the model relies on it.
    KILN_LOG(Error, "%s NHWC stride_c %zu differs from the element size %u", r.name, stride_c_,
             elem_size_);
    return Error::NpuInvalidRegister;
  }

  // Extent of each tile that the logical area touches: (rows, cols).
  const uint32_t left_w = min_u32(width, width0_);
  const uint32_t right_w = width > width0_ ? width - width0_ : 0;
  const uint32_t tile_rows[4] = {min_u32(height, height0_), min_u32(height, height1_),
                                 height > height0_ ? height - height0_ : 0,
                                 height > height1_ ? height - height1_ : 0};
  const uint32_t tile_cols[4] = {left_w, right_w, left_w, right_w};
  uint64_t channel_extent;
  if (format_ == DataFormat::Nhwc) {
    channel_extent = uint64_t{depth} * elem_size_;
  } else {
    channel_extent = uint64_t{(depth - 1) >> 4} * stride_c_ + (((depth - 1) & 15u) + 1u) * elem_size_;
  }
  for (int t = 0; t < 4; ++t) {
    if (tile_rows[t] == 0 || tile_cols[t] == 0) continue;
    const uint64_t end = uint64_t{base_[t]} + uint64_t{tile_rows[t] - 1} * stride_y_ +
                         uint64_t{tile_cols[t] - 1} * stride_x_ + channel_extent;
    if (data_ == nullptr || end > mem.size) {
      KILN_LOG(Error,
               "%s tile %d (base 0x%zx, %ux%ux%u, strides y %zu x %zu c %zu) ends at 0x%llx, "
               "beyond region %u of %zu bytes",
               r.name, t, base_[t], tile_rows[t], tile_cols[t], depth, stride_y_, stride_x_,
               stride_c_, static_cast<unsigned long long>(end), region_, mem.size);
      return Error::NpuRegionOutOfBounds;
    }
  }
  return Error::Ok;
}

}  // namespace kiln::vnpu
