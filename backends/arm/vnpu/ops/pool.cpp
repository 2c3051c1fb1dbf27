// NPU_OP_POOL: max, average and reduce-sum pooling over the kernel window. Padded taps are
// skipped. Average divides by the number of taps inside the IFM (TOSA's reciprocal scale,
// single rounding) when the window is padded, else OFM_SCALE carries 1/area.
#include "backends/arm/vnpu/ops/op_context.h"

#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

// TOSA reciprocal_scale: multiplier/shift with 2^30 <= multiplier < 2^31.
void reciprocal_scale(uint32_t count, uint32_t* multiplier, uint32_t* shift) {
  uint32_t k = 0;
  while ((1u << k) < count) ++k;  // 2^(k-1) < count <= 2^k
  const uint64_t numerator = ((uint64_t{1} << 30) + 1) << k;
  *multiplier = static_cast<uint32_t>(numerator / count);
  *shift = 30 + k;
}

}  // namespace

Error run_pool(OpContext& ctx) {
  const RegisterFile& regs = ctx.regs;
  if (ctx.param > 2) {
    KILN_LOG(Error, "pooling mode %u is reserved", ctx.param);
    return Error::NpuInvalidRegister;
  }
  const PoolingMode mode = static_cast<PoolingMode>(ctx.param);
  KernelGeometry k;
  Error err = kernel_geometry(regs, &k);
  if (err != Error::Ok) return err;
  const OfmShape o = ofm_shape(regs);
  const uint32_t upscale_mode = regs.get(Cmd0::IfmUpscale) & 3u;
  const uint32_t up = upscale_mode == 0 ? 1u : 2u;
  const int64_t h = int64_t{o.height - 1} * k.stride_y + int64_t{k.height - 1} * k.dilation_y + 1 -
                    k.pad_top - k.pad_bottom;
  const int64_t w = int64_t{o.width - 1} * k.stride_x + int64_t{k.width - 1} * k.dilation_x + 1 -
                    k.pad_left - k.pad_right;
  if (h <= 0 || w <= 0) {
    KILN_LOG(Error, "pooling padding leaves no IFM to read");
    return Error::NpuInvalidRegister;
  }
  // Reduce sum keeps the IFM depth and sums over it (the OFM depth is 1).
  const uint32_t ifm_depth = mode == PoolingMode::ReduceSum ? regs.get(Cmd0::IfmDepthM1) + 1u : o.depth;
  FeatureMap ifm, ofm;
  err = ifm.bind(FeatureMapKind::Ifm, regs, ctx.regions, static_cast<uint32_t>((h + up - 1) / up),
                 static_cast<uint32_t>((w + up - 1) / up), ifm_depth);
  if (err != Error::Ok) return err;
  err = ofm.bind(FeatureMapKind::Ofm, regs, ctx.regions, o.height, o.width, o.depth);
  if (err != Error::Ok) return err;
  OutputStage stage;
  err = make_output_stage(ctx, ofm, &stage);
  if (err != Error::Ok) return err;
  const uint64_t work = uint64_t{o.height} * o.width * o.depth * k.height * k.width *
                        (mode == PoolingMode::ReduceSum ? ifm_depth : 1u);
  err = charge_work(ctx, work, "NPU_OP_POOL");
  if (err != Error::Ok) return err;
  int32_t zp = ifm.is_signed() ? regs.get_signed(Cmd0::IfmZeroPoint) : regs.get(Cmd0::IfmZeroPoint);
  if (ifm.elem_size() == 4) zp = 0;
  const bool padded = k.pad_top != 0 || k.pad_left != 0 || k.pad_bottom != 0 || k.pad_right != 0;
  const uint32_t ofm_scale = regs.get(Cmd1::OfmScale);
  const uint32_t ofm_shift = regs.param(Cmd1::OfmScale) & 0x3fu;

  for (uint32_t oy = 0; oy < o.height; ++oy) {
    for (uint32_t ox = 0; ox < o.width; ++ox) {
      for (uint32_t oc = 0; oc < o.depth; ++oc) {
        int64_t acc = mode == PoolingMode::Max ? INT64_MIN : 0;
        uint32_t count = 0;
        for (uint32_t ky = 0; ky < k.height; ++ky) {
          const int64_t iy = int64_t{oy} * k.stride_y + ky * k.dilation_y - k.pad_top;
          if (iy < 0 || iy >= h) continue;
          for (uint32_t kx = 0; kx < k.width; ++kx) {
            const int64_t ix = int64_t{ox} * k.stride_x + kx * k.dilation_x - k.pad_left;
            if (ix < 0 || ix >= w) continue;
            uint32_t y = static_cast<uint32_t>(iy), x = static_cast<uint32_t>(ix);
            if (up == 2) {
              if (upscale_mode == 2 && ((x | y) & 1u) != 0) continue;
              y >>= 1;
              x >>= 1;
            }
            if (mode == PoolingMode::ReduceSum) {
              for (uint32_t c = 0; c < ifm_depth; ++c) acc += ifm.read(y, x, c) - zp;
            } else {
              const int64_t v = ifm.read(y, x, oc) - zp;
              if (mode == PoolingMode::Max) {
                if (v > acc) acc = v;
              } else {
                acc += v;
              }
            }
            ++count;
          }
        }
        if (count == 0) acc = 0;
        // With padding the NPU divides by the number of taps inside the IFM itself; without,
        // Vela folds 1/(kernel area) into OFM_SCALE.
        if (mode == PoolingMode::Average && count > 0 && padded) {
          uint32_t m, s;
          reciprocal_scale(count, &m, &s);
          acc = scale_value(acc, m, s, RoundMode::Natural);
        }
        const int64_t scaled = scale_value(acc, ofm_scale, ofm_shift, stage.round);
        ofm.write(oy, ox, oc, stage.finish(scaled));
      }
    }
  }
  ctx.bytes_read[ifm.region()] += ifm.bytes();
  ctx.bytes_written[ofm.region()] += ofm.bytes();
  ctx.record.bytes_read += ifm.bytes();
  ctx.record.bytes_written += ofm.bytes();
  return Error::Ok;
}

}  // namespace kiln::vnpu
