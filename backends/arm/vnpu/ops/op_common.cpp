// Register decoding shared by the operations.
#include "backends/arm/vnpu/ops/op_context.h"

#include "runtime/platform/log.h"

namespace kiln::vnpu {

OfmShape ofm_shape(const RegisterFile& regs) {
  return OfmShape{regs.get(Cmd0::OfmHeightM1) + 1u, regs.get(Cmd0::OfmWidthM1) + 1u,
                  regs.get(Cmd0::OfmDepthM1) + 1u};
}

Error kernel_geometry(const RegisterFile& regs, KernelGeometry* k) {
  const uint32_t p = regs.get(Cmd0::KernelStride);
  // bit 0/1: stride x/y - 1 (low bit), bits 6-8 / 9-11: the high bits; bit 2 weight order;
  // bits 3/4: dilation x/y - 1.
  k->stride_x = ((p & 1u) | (((p >> 6) & 7u) << 1)) + 1u;
  k->stride_y = (((p >> 1) & 1u) | (((p >> 9) & 7u) << 1)) + 1u;
  k->part_kernel_first = ((p >> 2) & 1u) != 0;
  k->dilation_x = ((p >> 3) & 1u) + 1u;
  k->dilation_y = ((p >> 4) & 1u) + 1u;
  // KERNEL_*_M1 hold the dilated extent minus one.
  const uint32_t ext_w = regs.get(Cmd0::KernelWidthM1);
  const uint32_t ext_h = regs.get(Cmd0::KernelHeightM1);
  if (ext_w % k->dilation_x != 0 || ext_h % k->dilation_y != 0) {
    KILN_LOG(Error, "kernel extent %ux%u is not a multiple of the dilation %ux%u", ext_h + 1,
             ext_w + 1, k->dilation_y, k->dilation_x);
    return Error::NpuInvalidRegister;
  }
  k->width = ext_w / k->dilation_x + 1u;
  k->height = ext_h / k->dilation_y + 1u;
  k->pad_top = regs.get(Cmd0::IfmPadTop);
  k->pad_left = regs.get(Cmd0::IfmPadLeft);
  k->pad_bottom = regs.get(Cmd0::IfmPadBottom);
  k->pad_right = regs.get(Cmd0::IfmPadRight);
  if (k->height > 64 || k->width > 64 || k->pad_top > 127 || k->pad_left > 127 ||
      k->pad_bottom > 127 || k->pad_right > 127) {
    KILN_LOG(Error, "kernel %ux%u / padding t%d l%d b%d r%d out of range", k->height, k->width,
             k->pad_top, k->pad_left, k->pad_bottom, k->pad_right);
    return Error::NpuInvalidRegister;
  }
  return Error::Ok;
}

Error charge_work(OpContext& ctx, uint64_t work, const char* what) {
  if (work > ctx.work_budget) {
    KILN_LOG(Error, "%s needs %llu MAC/element steps, only %llu left of the stream's budget",
             what, static_cast<unsigned long long>(work),
             static_cast<unsigned long long>(ctx.work_budget));
    return Error::NpuWorkLimitExceeded;
  }
  ctx.work_budget -= work;
  ctx.record.macs += work;
  return Error::Ok;
}

Error make_output_stage(const OpContext& ctx, const FeatureMap& ofm, OutputStage* stage) {
  const RegisterFile& regs = ctx.regs;
  const uint32_t ofm_precision = regs.get(Cmd0::OfmPrecision);
  const uint32_t round = (ofm_precision >> 14) & 3u;
  if (round > 2) {
    KILN_LOG(Error, "OFM rounding mode %u is reserved", round);
    return Error::NpuInvalidRegister;
  }
  stage->round = static_cast<RoundMode>(round);
  stage->zero_point = ofm.elem_size() == 4 ? 0 : regs.get_signed(Cmd0::OfmZeroPoint);
  if (!ofm.is_signed() && ofm.elem_size() < 4) {
    stage->zero_point = regs.get(Cmd0::OfmZeroPoint);
  }
  const uint32_t act = regs.get(Cmd0::Activation);
  const uint32_t function = act & 0xfffu;
  const uint32_t clip_range = (act >> 12) & 0xfu;
  int32_t lo = ofm.type_min(), hi = ofm.type_max();
  switch (clip_range) {
    case 0: break;
    case 2: lo = 0; hi = 255; break;
    case 3: lo = -128; hi = 127; break;
    case 5: lo = -32768; hi = 32767; break;
    default:
      KILN_LOG(Error, "activation clip range %u is reserved", clip_range);
      return Error::NpuInvalidRegister;
  }
  // ACTIVATION_MIN/MAX are in the OFM's quantized domain; 32-bit OFMs are not clipped by them.
  if (ofm.elem_size() < 4) {
    const int32_t amin = ofm.is_signed() ? regs.get_signed(Cmd0::ActivationMin)
                                         : regs.get(Cmd0::ActivationMin);
    const int32_t amax = ofm.is_signed() ? regs.get_signed(Cmd0::ActivationMax)
                                         : regs.get(Cmd0::ActivationMax);
    if (amin > lo) lo = amin;
    if (amax < hi) hi = amax;
  }
  stage->clip_min = lo;
  stage->clip_max = hi;
  stage->lut = nullptr;
  if (function >= kActivationLutStart && function <= kActivationLutEnd) {
    const size_t offset = ctx.lut_offset + 256u * (function - kActivationLutStart);
    if (ofm.elem_size() != 1 || offset + 256u > ctx.internal_memory.size()) {
      KILN_LOG(Error, "table lookup %u on a %u-byte OFM is not modelled (LUT at 0x%zx)",
               function - kActivationLutStart, ofm.elem_size(), offset);
      return Error::NpuInvalidRegister;
    }
    stage->lut = ctx.internal_memory.data() + offset;
    stage->lut_signed = ofm.is_signed();
  } else if (function != kActivationNone) {
    KILN_LOG(Error, "activation function %u (tanh/sigmoid) is not modelled", function);
    return Error::NpuInvalidRegister;
  }
  return Error::Ok;
}

Error read_channel_scales(OpContext& ctx, uint32_t count, ChannelScales* out) {
  const RegisterFile& regs = ctx.regs;
  const uint32_t region = regs.get(Cmd0::ScaleRegion) & 0xffu;
  const uint64_t base = regs.get(Cmd1::ScaleBase);
  const uint64_t length = regs.get(Cmd1::ScaleLength);
  if (region >= ctx.regions.size()) {
    KILN_LOG(Error, "scale region %u: only %zu regions given", region, ctx.regions.size());
    return Error::NpuRegionOutOfBounds;
  }
  const Region& mem = ctx.regions[region];
  const uint64_t needed = uint64_t{count} * 10u;
  if (length < needed || mem.data == nullptr || base + needed > mem.size) {
    KILN_LOG(Error,
             "scale stream at 0x%llx (length %llu) in region %u of %zu bytes cannot hold %u "
             "channels of 10 bytes",
             static_cast<unsigned long long>(base), static_cast<unsigned long long>(length),
             region, mem.size, count);
    return Error::NpuRegionOutOfBounds;
  }
  int64_t* bias = ctx.scratch.allocate<int64_t>(count);
  uint32_t* scale = ctx.scratch.allocate<uint32_t>(count);
  uint8_t* shift = ctx.scratch.allocate<uint8_t>(count);
  if (bias == nullptr || scale == nullptr || shift == nullptr) {
    KILN_LOG(Error, "work memory too small for %u channel scales", count);
    return Error::OutOfResources;
  }
  const uint8_t* p = mem.data + base;
  for (uint32_t c = 0; c < count; ++c, p += 10) {
    // Bytes 0-4: bias (40-bit two's complement), 5-8: scale, 9: shift (6 bits).
    uint64_t b = 0;
    for (int i = 0; i < 5; ++i) b |= uint64_t{p[i]} << (8 * i);
    bias[c] = static_cast<int64_t>(b << 24) >> 24;
    scale[c] = uint32_t{p[5]} | (uint32_t{p[6]} << 8) | (uint32_t{p[7]} << 16) |
               (uint32_t{p[8]} << 24);
    shift[c] = p[9] & 0x3fu;
  }
  ctx.bytes_read[region] += needed;
  ctx.record.bytes_read += needed;
  out->bias = bias;
  out->scale = scale;
  out->shift = shift;
  return Error::Ok;
}

}  // namespace kiln::vnpu
