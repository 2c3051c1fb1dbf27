// NPU_OP_CONV: convolution and vector product (fully connected = 1x1 kernel on a 1x1 IFM).
// acc[oc] = sum over taps inside the IFM of (ifm - ifm_zp) * w; padded taps add nothing
// (they read the zero point). Then bias and the per-channel output stage (conv_common.h).
// With weights from IFM2 (Ethos-U85 matmul) the weights of OFM row y are IFM2 row y:
// w[oc][ic] = IFM2(y, oc, ic) - ifm2_zp, 1x1 kernel, global scaling.
//
// 8-bit IFMs (every Vela int8 network) take the fast path: the IFM rows are gathered once
// into dense int16 rows (IfmRows), so each kernel row is one contiguous dot product of
// kernel_width * ifm_depth int16 pairs against the dense weights, accumulated in int32, and
// four OFM channels share each IFM load. 16/32-bit IFMs use the element-wise reference loop.
#include "backends/arm/vnpu/ops/conv_common.h"
#include "backends/arm/vnpu/ops/ifm_rows.h"

#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

// Four dot products of `a` with b0..b3 (n int16 pairs each), 32-bit accumulation that
// wraps like the NPU's 32-bit accumulators (a hostile kernel of more than 2^13 taps times
// channels can pass 2^31; valid ones stay far below). Each product (9-bit IFM value times
// 16-bit weight) fits in int32.
inline void dot4(const int16_t* a, const int16_t* b0, const int16_t* b1, const int16_t* b2,
                 const int16_t* b3, uint32_t n, int32_t* out) {
  uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const int32_t v = a[i];
    s0 += static_cast<uint32_t>(v * b0[i]);
    s1 += static_cast<uint32_t>(v * b1[i]);
    s2 += static_cast<uint32_t>(v * b2[i]);
    s3 += static_cast<uint32_t>(v * b3[i]);
  }
  out[0] = static_cast<int32_t>(static_cast<uint32_t>(out[0]) + s0);
  out[1] = static_cast<int32_t>(static_cast<uint32_t>(out[1]) + s1);
  out[2] = static_cast<int32_t>(static_cast<uint32_t>(out[2]) + s2);
  out[3] = static_cast<int32_t>(static_cast<uint32_t>(out[3]) + s3);
}

inline uint32_t dot(const int16_t* a, const int16_t* b, uint32_t n) {
  uint32_t s = 0;
  for (uint32_t i = 0; i < n; ++i) s += static_cast<uint32_t>(int32_t{a[i]} * b[i]);
  return s;
}

Error run_conv_int8(OpContext& ctx, ConvSetup& s) {
  IfmRows rows;
  Error err = rows.init(ctx, s);
  if (err != Error::Ok) return err;
  const uint32_t kh = s.k.height, kw = s.k.width, depth = s.ifm_depth;
  const uint32_t n_oc = s.ofm_depth;
  // A kernel row is contiguous in the gathered rows when it is not dilated.
  const bool row_contiguous = s.k.dilation_x == 1;
  const uint32_t run = row_contiguous ? kw * depth : depth;
  const uint32_t runs_per_row = row_contiguous ? 1u : kw;
  const size_t w_per_oc = size_t{kh} * kw * depth;
  const size_t w_per_row = size_t{kw} * depth;
  const size_t px_step = size_t{s.k.stride_x} * depth;
  const size_t run_step = size_t{s.k.dilation_x} * depth;  // between runs when dilated
  const bool direct = s.out.direct();
  int32_t sums[4];
  for (uint32_t oy = 0; oy < s.ofm_height; ++oy) {
    rows.load_for(oy);
    for (uint32_t ox = 0; ox < s.ofm_width; ++ox) {
      uint8_t* out_px = direct ? s.out.pixel(oy, ox) : nullptr;
      for (uint32_t oc = 0; oc < n_oc; oc += 4) {
        const uint32_t group = n_oc - oc < 4 ? n_oc - oc : 4;
        sums[0] = sums[1] = sums[2] = sums[3] = 0;
        const int16_t* w0 = s.weights + w_per_oc * oc;
        for (uint32_t ky = 0; ky < kh; ++ky) {
          const int16_t* in = rows.row(ky) + px_step * ox;
          const int16_t* w = w0 + w_per_row * ky;
          for (uint32_t r = 0; r < runs_per_row; ++r, in += run_step, w += depth) {
            if (group == 4) {
              dot4(in, w, w + w_per_oc, w + 2 * w_per_oc, w + 3 * w_per_oc, run, sums);
            } else {
              for (uint32_t g = 0; g < group; ++g) {
                sums[g] = static_cast<int32_t>(static_cast<uint32_t>(sums[g]) + dot(in, w + g * w_per_oc, run));
              }
            }
          }
        }
        for (uint32_t g = 0; g < group; ++g) {
          if (direct) {
            s.out.store_pixel(out_px, oc + g, sums[g]);
          } else {
            s.out.put(oy, ox, oc + g, sums[g]);
          }
        }
      }
    }
  }
  return Error::Ok;
}

void run_conv_reference(ConvSetup& s) {
  const uint32_t ic_depth = s.ifm_depth;
  const uint32_t kh = s.k.height, kw = s.k.width;
  for (uint32_t oy = 0; oy < s.ofm_height; ++oy) {
    for (uint32_t ox = 0; ox < s.ofm_width; ++ox) {
      for (uint32_t oc = 0; oc < s.ofm_depth; ++oc) {
        int64_t acc = 0;
        const int16_t* w_oc = s.weights + size_t{oc} * kh * kw * ic_depth;
        for (uint32_t ky = 0; ky < kh; ++ky) {
          const int32_t iy = static_cast<int32_t>(oy * s.k.stride_y + ky * s.k.dilation_y) - s.k.pad_top;
          if (iy < 0 || iy >= static_cast<int32_t>(s.ifm_height)) continue;
          for (uint32_t kx = 0; kx < kw; ++kx) {
            const int32_t ix = static_cast<int32_t>(ox * s.k.stride_x + kx * s.k.dilation_x) - s.k.pad_left;
            if (ix < 0 || ix >= static_cast<int32_t>(s.ifm_width)) continue;
            const int16_t* w = w_oc + (size_t{ky} * kw + kx) * ic_depth;
            for (uint32_t c = 0; c < ic_depth; ++c) {
              int64_t v;
              if (!read_upscaled(s, iy, ix, c, &v)) continue;
              acc = wrapping_add(acc, wrapping_mul(wrapping_sub(v, s.ifm_zp), w[c]));
            }
          }
        }
        s.out.put(oy, ox, oc, acc);
      }
    }
  }
}

// Weights from IFM2 (matmul): OFM(y, x, oc) = sum_ic (IFM(y, x, ic) - zp) * (IFM2(y, oc, ic) - zp2).
Error run_conv_ifm2_weights(OpContext& ctx, ConvSetup& s) {
  const OpDesc& op = ctx.op;
  if (s.k.height != 1 || s.k.width != 1 || s.upscale != 1 || s.k.pad_top != 0 || s.k.pad_left != 0) {
    KILN_LOG(Error, "weights from IFM2 with a %ux%u kernel, upscaling or padding are not modelled", s.k.height,
             s.k.width);
    return Error::NpuInvalidRegister;
  }
  // A 1x1 kernel reads IFM(oy * stride, ox * stride): the strides must keep that inside the IFM
  // (a hostile stream may give an OFM the IFM cannot cover).
  if (s.ofm_height != 0 && s.ofm_width != 0 &&
      (uint64_t{s.ofm_height - 1} * s.k.stride_y >= s.ifm_height ||
       uint64_t{s.ofm_width - 1} * s.k.stride_x >= s.ifm_width)) {
    KILN_LOG(Error, "weights from IFM2: a %ux%u OFM with stride %ux%u reads outside the %ux%u IFM", s.ofm_height,
             s.ofm_width, s.k.stride_y, s.k.stride_x, s.ifm_height, s.ifm_width);
    return Error::NpuInvalidRegister;
  }
  FeatureMap ifm2;
  Error err = bind_input(ctx, op.ifm2, "IFM2 (weights)", s.ofm_height, s.ofm_depth, s.ifm_depth, &ifm2);
  if (err != Error::Ok) return err;
  const int64_t zp2 = op.ifm2.zero_point;
  for (uint32_t oy = 0; oy < s.ofm_height; ++oy) {
    for (uint32_t ox = 0; ox < s.ofm_width; ++ox) {
      const uint32_t iy = oy * s.k.stride_y, ix = ox * s.k.stride_x;
      for (uint32_t oc = 0; oc < s.ofm_depth; ++oc) {
        int64_t acc = 0;
        for (uint32_t ic = 0; ic < s.ifm_depth; ++ic) {
          acc = wrapping_add(acc, wrapping_mul(wrapping_sub(s.ifm.read(iy, ix, ic), s.ifm_zp),
                                               wrapping_sub(ifm2.read(oy, oc, ic), zp2)));
        }
        s.out.put(oy, ox, oc, acc);
      }
    }
  }
  count_read(ctx, ifm2, ifm2.bytes());
  return Error::Ok;
}

}  // namespace

Error run_conv(OpContext& ctx) {
  ConvSetup s;
  Error err = setup_conv(ctx, /*depthwise=*/false, &s);
  if (err != Error::Ok) return err;
  if (ctx.op.weights_from_ifm2) {
    err = run_conv_ifm2_weights(ctx, s);
  } else if (uses_int16_rows(s)) {
    err = run_conv_int8(ctx, s);
  } else {
    run_conv_reference(s);
  }
  if (err == Error::Ok) s.out.count(ctx);
  return err;
}

}  // namespace kiln::vnpu
