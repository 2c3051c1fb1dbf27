// NPU_OP_DEPTHWISE: each OFM channel convolves the IFM channel of the same index.
//
// 8-bit IFMs take the fast path: gathered int16 IFM rows (IfmRows) and the weights
// transposed to [tap][channel] once per operation, so every kernel tap is one multiply-add
// over all channels of a pixel into int32 accumulators (contiguous, vectorisable).
#include "backends/arm/vnpu/ops/conv_common.h"
#include "backends/arm/vnpu/ops/ifm_rows.h"

#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

Error run_depthwise_int8(OpContext& ctx, ConvSetup& s) {
  IfmRows rows;
  Error err = rows.init(ctx, s);
  if (err != Error::Ok) return err;
  const uint32_t kh = s.k.height, kw = s.k.width, depth = s.ofm_depth;
  const uint32_t taps = kh * kw;
  int16_t* w_t = ctx.scratch.allocate<int16_t>(size_t{taps} * depth);
  int32_t* acc = ctx.scratch.allocate<int32_t>(depth);
  if (w_t == nullptr || acc == nullptr) {
    KILN_LOG(Error, "work memory too small for %u x %u depthwise weights", taps, depth);
    return Error::OutOfResources;
  }
  for (uint32_t c = 0; c < depth; ++c) {
    for (uint32_t t = 0; t < taps; ++t) w_t[size_t{t} * depth + c] = s.weights[size_t{c} * taps + t];
  }
  const size_t px_step = size_t{s.k.stride_x} * depth;
  const size_t tap_step = size_t{s.k.dilation_x} * depth;
  for (uint32_t oy = 0; oy < s.ofm_height; ++oy) {
    rows.load_for(oy);
    for (uint32_t ox = 0; ox < s.ofm_width; ++ox) {
      for (uint32_t c = 0; c < depth; ++c) acc[c] = 0;
      for (uint32_t ky = 0; ky < kh; ++ky) {
        const int16_t* in = rows.row(ky) + px_step * ox;
        const int16_t* w = w_t + size_t{ky} * kw * depth;
        for (uint32_t kx = 0; kx < kw; ++kx, in += tap_step, w += depth) {
          // Wraps like a 32-bit accumulator (only a hostile kernel can pass 2^31).
          for (uint32_t c = 0; c < depth; ++c) {
            acc[c] = static_cast<int32_t>(static_cast<uint32_t>(acc[c]) + static_cast<uint32_t>(int32_t{in[c]} * w[c]));
          }
        }
      }
      if (s.out.direct()) {
        uint8_t* out_px = s.out.pixel(oy, ox);
        for (uint32_t c = 0; c < depth; ++c) s.out.store_pixel(out_px, c, acc[c]);
      } else {
        for (uint32_t c = 0; c < depth; ++c) s.out.put(oy, ox, c, acc[c]);
      }
    }
  }
  return Error::Ok;
}

void run_depthwise_reference(ConvSetup& s) {
  const uint32_t kh = s.k.height, kw = s.k.width;
  for (uint32_t oy = 0; oy < s.ofm_height; ++oy) {
    for (uint32_t ox = 0; ox < s.ofm_width; ++ox) {
      for (uint32_t c = 0; c < s.ofm_depth; ++c) {
        int64_t acc = 0;
        const int16_t* w = s.weights + size_t{c} * kh * kw;
        for (uint32_t ky = 0; ky < kh; ++ky) {
          const int32_t iy = static_cast<int32_t>(oy * s.k.stride_y + ky * s.k.dilation_y) - s.k.pad_top;
          if (iy < 0 || iy >= static_cast<int32_t>(s.ifm_height)) continue;
          for (uint32_t kx = 0; kx < kw; ++kx) {
            const int32_t ix = static_cast<int32_t>(ox * s.k.stride_x + kx * s.k.dilation_x) - s.k.pad_left;
            if (ix < 0 || ix >= static_cast<int32_t>(s.ifm_width)) continue;
            int64_t v;
            if (!read_upscaled(s, iy, ix, c, &v)) continue;
            acc = wrapping_add(acc, wrapping_mul(wrapping_sub(v, s.ifm_zp), w[ky * kw + kx]));
          }
        }
        s.out.put(oy, ox, c, acc);
      }
    }
  }
}

}  // namespace

Error run_depthwise(OpContext& ctx) {
  ConvSetup s;
  Error err = setup_conv(ctx, /*depthwise=*/true, &s);
  if (err != Error::Ok) return err;
  if (uses_int16_rows(s)) {
    err = run_depthwise_int8(ctx, s);
  } else {
    run_depthwise_reference(s);
  }
  if (err == Error::Ok) s.out.count(ctx);
  return err;
}

}  // namespace kiln::vnpu
