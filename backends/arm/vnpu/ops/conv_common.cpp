#include "backends/arm/vnpu/ops/conv_common.h"

#include "backends/arm/vnpu/weight_layout.h"
#include "runtime/platform/log.h"

namespace kiln::vnpu {

Error setup_conv(OpContext& ctx, bool depthwise, ConvSetup* s) {
  const RegisterFile& regs = ctx.regs;
  Error err = kernel_geometry(regs, &s->k);
  if (err != Error::Ok) return err;
  s->ofm_shape = ofm_shape(regs);
  s->ifm_depth = depthwise ? s->ofm_shape.depth : regs.get(Cmd0::IfmDepthM1) + 1u;
  const uint32_t mode = regs.get(Cmd0::IfmUpscale) & 3u;
  if (mode > 2) {
    KILN_LOG(Error, "IFM upscale mode %u is reserved", mode);
    return Error::NpuInvalidRegister;
  }
  s->upscale_mode = static_cast<UpscaleMode>(mode);
  s->upscale = mode == 0 ? 1u : 2u;
  // The IFM extent is what the OFM, stride, kernel and padding imply.
  const int64_t h = int64_t{s->ofm_shape.height - 1} * s->k.stride_y +
                    int64_t{s->k.height - 1} * s->k.dilation_y + 1 - s->k.pad_top - s->k.pad_bottom;
  const int64_t w = int64_t{s->ofm_shape.width - 1} * s->k.stride_x +
                    int64_t{s->k.width - 1} * s->k.dilation_x + 1 - s->k.pad_left - s->k.pad_right;
  if (h <= 0 || w <= 0) {
    KILN_LOG(Error, "padding leaves no IFM to read (%lld x %lld)", static_cast<long long>(h),
             static_cast<long long>(w));
    return Error::NpuInvalidRegister;
  }
  s->ifm_height = static_cast<uint32_t>(h);
  s->ifm_width = static_cast<uint32_t>(w);
  const uint32_t phys_h = (s->ifm_height + s->upscale - 1) / s->upscale;
  const uint32_t phys_w = (s->ifm_width + s->upscale - 1) / s->upscale;
  err = s->ifm.bind(FeatureMapKind::Ifm, regs, ctx.regions, phys_h, phys_w, s->ifm_depth);
  if (err != Error::Ok) return err;
  err = s->ofm.bind(FeatureMapKind::Ofm, regs, ctx.regions, s->ofm_shape.height,
                    s->ofm_shape.width, s->ofm_shape.depth);
  if (err != Error::Ok) return err;
  s->ifm_zp = s->ifm.is_signed() ? regs.get_signed(Cmd0::IfmZeroPoint) : regs.get(Cmd0::IfmZeroPoint);
  if (s->ifm.elem_size() == 4) s->ifm_zp = 0;

  const uint64_t macs = uint64_t{s->ofm_shape.height} * s->ofm_shape.width * s->ofm_shape.depth *
                        s->k.height * s->k.width * (depthwise ? 1u : s->ifm_depth);
  err = charge_work(ctx, macs, depthwise ? "NPU_OP_DEPTHWISE" : "NPU_OP_CONV");
  if (err != Error::Ok) return err;
  err = read_channel_scales(ctx, s->ofm_shape.depth, &s->scales);
  if (err != Error::Ok) return err;
  err = make_output_stage(ctx, s->ofm, &s->stage);
  if (err != Error::Ok) return err;

  WeightLayout layout;
  layout.ofm_depth = s->ofm_shape.depth;
  layout.kernel_height = s->k.height;
  layout.kernel_width = s->k.width;
  layout.ifm_depth = s->ifm_depth;
  layout.ofm_block_depth = regs.get(Cmd0::OfmBlkDepthM1) + 1u;
  ublock_depths(ctx.config, &layout.ifm_ublock_depth, &layout.ofm_ublock_depth);
  layout.depthwise = depthwise;
  layout.part_kernel_first = s->k.part_kernel_first && !depthwise;
  layout.ifm_bits = s->ifm.elem_size() * 8u;
  layout.dilation_y = s->k.dilation_y;
  layout.dilation_x = s->k.dilation_x;
  err = load_dense_weights(ctx, layout, &s->weights);
  if (err != Error::Ok) return err;

  const uint64_t ifm_bytes = uint64_t{phys_h} * phys_w * s->ifm_depth * s->ifm.elem_size();
  ctx.bytes_read[s->ifm.region()] += ifm_bytes;
  ctx.record.bytes_read += ifm_bytes;
  ctx.bytes_written[s->ofm.region()] += s->ofm.bytes();
  ctx.record.bytes_written += s->ofm.bytes();
  return Error::Ok;
}

}  // namespace kiln::vnpu
