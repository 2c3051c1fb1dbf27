#include "backends/arm/vnpu/ops/conv_common.h"

#include "backends/arm/vnpu/ops/wrapping.h"
#include "backends/arm/vnpu/weight_layout.h"
#include "runtime/platform/log.h"

namespace kiln::vnpu {

Error Epilogue::init(OpContext& ctx, const ChannelScales& scales) {
  const OpDesc& op = ctx.op;
  scales_ = scales;
  width_ = op.ofm_width;
  depth_ = op.ofm_depth;
  Error err = make_output_stage(ctx, &stage_);
  if (err != Error::Ok) return err;
  err = initial_accumulators(ctx, &initial_);
  if (err != Error::Ok) return err;
  if (!op.acc_output) {
    err = kept_accumulators(ctx, &kept_);
    if (err != Error::Ok) return err;
  }
  err = bind_output(ctx, &ofm_, &bound_);
  if (err != Error::Ok) return err;
  direct_ = bound_ && initial_ == nullptr && kept_ == nullptr && ofm_.has_plain_layout();
  return Error::Ok;
}

void Epilogue::count(OpContext& ctx) const {
  if (!bound_) return;
  count_written(ctx, ofm_, ofm_.bytes());
  ctx.state.condition = ofm_.bytes() > 0 && ofm_.read(0, 0, 0) != 0;
}

Error setup_conv(OpContext& ctx, bool depthwise, ConvSetup* s) {
  const OpDesc& op = ctx.op;
  s->k = op.kernel;
  s->ofm_height = op.ofm_height;
  s->ofm_width = op.ofm_width;
  s->ofm_depth = op.ofm_depth;
  s->ifm_depth = op.ifm_depth;
  s->upscale_mode = op.upscale;
  s->upscale = op.upscale == UpscaleMode::None ? 1u : 2u;
  // The IFM extent is what the OFM, stride, kernel and padding imply.
  const int64_t h = int64_t{s->ofm_height - 1} * s->k.stride_y + int64_t{s->k.height - 1} * s->k.dilation_y + 1 -
                    s->k.pad_top - s->k.pad_bottom;
  const int64_t w = int64_t{s->ofm_width - 1} * s->k.stride_x + int64_t{s->k.width - 1} * s->k.dilation_x + 1 -
                    s->k.pad_left - s->k.pad_right;
  if (h <= 0 || w <= 0 || h > 65536 * 2 || w > 65536 * 2) {
    KILN_LOG(Error, "kernel, stride and padding imply an IFM of %lld x %lld", static_cast<long long>(h),
             static_cast<long long>(w));
    return Error::NpuInvalidRegister;
  }
  s->ifm_height = static_cast<uint32_t>(h);
  s->ifm_width = static_cast<uint32_t>(w);
  const uint32_t phys_h = (s->ifm_height + s->upscale - 1) / s->upscale;
  const uint32_t phys_w = (s->ifm_width + s->upscale - 1) / s->upscale;
  Error err = bind_input(ctx, op.ifm, "IFM", phys_h, phys_w, s->ifm_depth, &s->ifm);
  if (err != Error::Ok) return err;
  s->ifm_zp = op.ifm.zero_point;

  // Saturating: the work limit then stops an operation whose count passes 2^64 (and with
  // it every weight count below, which the MACs bound).
  const uint64_t pixels = saturating_mul(uint64_t{s->ofm_height} * s->ofm_width, s->ofm_depth);
  const uint64_t taps = saturating_mul(uint64_t{s->k.height} * s->k.width, depthwise ? 1u : s->ifm_depth);
  const uint64_t macs = saturating_mul(pixels, taps);
  err = charge_work(ctx, macs, depthwise ? "NPU_OP_DEPTHWISE" : "NPU_OP_CONV");
  if (err != Error::Ok) return err;
  err = read_channel_scales(ctx, s->ofm_depth, &s->scales);
  if (err != Error::Ok) return err;
  s->weights = nullptr;
  if (!op.weights_from_ifm2) {
    WeightShape shape;
    shape.ofm_depth = s->ofm_depth;
    shape.kernel_height = s->k.height;
    shape.kernel_width = s->k.width;
    shape.ifm_depth = depthwise ? 1u : s->ifm_depth;
    shape.ifm_bits = s->ifm.elem_size() * 8u;
    shape.stride_y = s->k.stride_y;
    shape.stride_x = s->k.stride_x;
    shape.dilation_y = s->k.dilation_y;
    shape.dilation_x = s->k.dilation_x;
    err = load_dense_weights(ctx, shape, &s->weights);
    if (err != Error::Ok) return err;
  }
  err = s->out.init(ctx, s->scales);
  if (err != Error::Ok) return err;
  count_read(ctx, s->ifm, uint64_t{phys_h} * phys_w * s->ifm_depth * s->ifm.elem_size());
  return Error::Ok;
}

}  // namespace kiln::vnpu
