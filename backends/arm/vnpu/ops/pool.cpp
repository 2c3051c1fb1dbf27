// NPU_OP_POOL: max, min, average, sum and reduce-sum pooling over the kernel window, argmax
// along one axis, and "none" (the accumulators come from IFM2 or the previous operation:
// Ethos-U85 copies of 32/64-bit data and bias preloads). Padded taps are skipped.
// Average divides by the number of taps inside the IFM with TOSA's reciprocal scale (single
// rounding) when the window is padded - or always, on an architecture that divides
// unpadded windows too (op.average_divides_unpadded); else OFM_SCALE carries 1/area.
// Argmax leaves the index of the first maximum in accumulator bits 16 and up (Vela scales
// the result by 2^-16).
#include "backends/arm/vnpu/ops/conv_common.h"

#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

// TOSA reciprocal_scale: multiplier/shift with 2^30 <= multiplier < 2^31.
Scaling reciprocal_scale(uint32_t count) {
  uint32_t k = 0;
  while ((1u << k) < count) ++k;  // 2^(k-1) < count <= 2^k
  const uint64_t numerator = ((uint64_t{1} << 30) + 1) << k;
  return Scaling{static_cast<uint32_t>(numerator / count), 30 + k, RoundMode::Natural, 0};
}

struct Window {
  int64_t h, w;  // logical IFM extent (after upscaling)
  uint32_t up;   // 1 or 2
  UpscaleMode upscale;
};

// Reads IFM tap (iy, ix) of a window; false for a padding tap or a zero-upscale hole.
inline bool tap(const Window& win, int64_t iy, int64_t ix, uint32_t* y, uint32_t* x) {
  if (iy < 0 || iy >= win.h || ix < 0 || ix >= win.w) return false;
  *y = static_cast<uint32_t>(iy);
  *x = static_cast<uint32_t>(ix);
  if (win.up == 2) {
    if (win.upscale == UpscaleMode::Zeros && ((*x | *y) & 1u) != 0) return false;
    *y >>= 1;
    *x >>= 1;
  }
  return true;
}

}  // namespace

Error run_pool(OpContext& ctx) {
  const OpDesc& op = ctx.op;
  const PoolOp mode = static_cast<PoolOp>(op.mode);
  const KernelGeometry& k = op.kernel;
  const uint32_t oh = op.ofm_height, ow = op.ofm_width, od = op.ofm_depth;
  Window win;
  win.up = op.upscale == UpscaleMode::None ? 1u : 2u;
  win.upscale = op.upscale;
  win.h = int64_t{oh - 1} * k.stride_y + int64_t{k.height - 1} * k.dilation_y + 1 - k.pad_top - k.pad_bottom;
  win.w = int64_t{ow - 1} * k.stride_x + int64_t{k.width - 1} * k.dilation_x + 1 - k.pad_left - k.pad_right;
  if (win.h <= 0 || win.w <= 0 || win.h > 131072 || win.w > 131072) {
    KILN_LOG(Error, "pooling kernel, stride and padding imply an IFM of %lld x %lld",
             static_cast<long long>(win.h), static_cast<long long>(win.w));
    return Error::NpuInvalidRegister;
  }
  const bool reads_ifm = mode != PoolOp::None;
  const uint32_t ifm_depth = mode == PoolOp::ReduceSum ? op.ifm_depth : od;
  FeatureMap ifm;
  if (reads_ifm) {
    Error err = bind_input(ctx, op.ifm, "IFM", static_cast<uint32_t>((win.h + win.up - 1) / win.up),
                           static_cast<uint32_t>((win.w + win.up - 1) / win.up), ifm_depth, &ifm);
    if (err != Error::Ok) return err;
  }
  const uint64_t taps = reads_ifm ? uint64_t{k.height} * k.width : 1u;
  const uint64_t work = saturating_mul(saturating_mul(uint64_t{oh} * ow * od, taps),
                                      mode == PoolOp::ReduceSum ? ifm_depth : 1u);
  Error err = charge_work(ctx, work, "NPU_OP_POOL");
  if (err != Error::Ok) return err;
  ChannelScales scales;
  err = read_channel_scales(ctx, od, &scales);
  if (err != Error::Ok) return err;
  Epilogue out;
  err = out.init(ctx, scales);
  if (err != Error::Ok) return err;
  const int64_t zp = op.ifm.zero_point;
  const bool padded = k.pad_top != 0 || k.pad_left != 0 || k.pad_bottom != 0 || k.pad_right != 0;
  const bool divide = mode == PoolOp::Average && (padded || op.average_divides_unpadded);

  for (uint32_t oy = 0; oy < oh; ++oy) {
    for (uint32_t ox = 0; ox < ow; ++ox) {
      for (uint32_t oc = 0; oc < od; ++oc) {
        int64_t acc = mode == PoolOp::Max || mode == PoolOp::ArgmaxX || mode == PoolOp::ArgmaxY ? INT64_MIN
                      : mode == PoolOp::Min ? INT64_MAX : 0;
        int64_t best_index = 0;
        uint32_t count = 0;
        for (uint32_t ky = 0; reads_ifm && ky < k.height; ++ky) {
          const int64_t iy = int64_t{oy} * k.stride_y + ky * k.dilation_y - k.pad_top;
          for (uint32_t kx = 0; kx < k.width; ++kx) {
            const int64_t ix = int64_t{ox} * k.stride_x + kx * k.dilation_x - k.pad_left;
            uint32_t y, x;
            if (!tap(win, iy, ix, &y, &x)) continue;
            ++count;
            if (mode == PoolOp::ReduceSum) {
              for (uint32_t c = 0; c < ifm_depth; ++c) {
                acc = wrapping_add(acc, wrapping_sub(ifm.read(y, x, c), zp));
              }
              continue;
            }
            const int64_t v = wrapping_sub(ifm.read(y, x, oc), zp);
            switch (mode) {
              case PoolOp::Max: if (v > acc) acc = v; break;
              case PoolOp::Min: if (v < acc) acc = v; break;
              case PoolOp::ArgmaxX:
              case PoolOp::ArgmaxY:
                if (v > acc) {
                  acc = v;
                  best_index = mode == PoolOp::ArgmaxX ? kx : ky;
                }
                break;
              default: acc = wrapping_add(acc, v); break;  // Average, Sum
            }
          }
        }
        if (count == 0) acc = 0;
        if (mode == PoolOp::ArgmaxX || mode == PoolOp::ArgmaxY) acc = best_index * 65536;
        if (divide && count > 0) acc = scale_value(acc, reciprocal_scale(count));
        out.put(oy, ox, oc, acc);
      }
    }
  }
  if (reads_ifm) count_read(ctx, ifm, ifm.bytes());
  out.count(ctx);
  return Error::Ok;
}

}  // namespace kiln::vnpu
