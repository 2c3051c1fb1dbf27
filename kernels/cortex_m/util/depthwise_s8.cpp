// The inner loops of cortex_m::quantized_depthwise_conv2d: channels are the vector
// dimension (NHWC keeps them contiguous); pixels whose window lies inside the image use a
// per-channel constant bias + input_offset * sum(w) precomputed for a chunk of
// channels, border pixels add the offset tap by tap. Helium takes eight channels at a
// time in 16-bit lanes, the DSP extension four (two halfword pairs), portable C++ one.
#include "kernels/cortex_m/util/depthwise_s8.h"

#include "kernels/cortex_m/util/flavour.h"
#include "kernels/cortex_m/util/requantize.h"

namespace kiln {
namespace cortex_m {
namespace {

struct Window {
  int32_t kh0, kh1, kw0, kw1;  // valid taps [kh0, kh1) x [kw0, kw1)
  int32_t iy0, ix0;            // input position of tap (0, 0)
  bool full;
};

Window window_at(const ConvArgs& a, int32_t oy, int32_t ox) {
  Window w;
  w.iy0 = oy * a.stride[0] - a.padding[0];
  w.ix0 = ox * a.stride[1] - a.padding[1];
  w.kh0 = 0;
  w.kh1 = a.kernel[0];
  w.kw0 = 0;
  w.kw1 = a.kernel[1];
  while (w.kh0 < w.kh1 && w.iy0 + w.kh0 * a.dilation[0] < 0) ++w.kh0;
  while (w.kh1 > w.kh0 && w.iy0 + (w.kh1 - 1) * a.dilation[0] >= a.in.h) --w.kh1;
  while (w.kw0 < w.kw1 && w.ix0 + w.kw0 * a.dilation[1] < 0) ++w.kw0;
  while (w.kw1 > w.kw0 && w.ix0 + (w.kw1 - 1) * a.dilation[1] >= a.in.w) --w.kw1;
  w.full = w.kh0 == 0 && w.kw0 == 0 && w.kh1 == a.kernel[0] && w.kw1 == a.kernel[1];
  return w;
}

inline int8_t finish(int32_t acc, int32_t c, const ConvArgs& a) {
  const int32_t y = requantize(acc, a.multipliers[c], a.shifts[c]) + a.output_offset;
  return static_cast<int8_t>(clamp(y, a.activation_min, a.activation_max));
}

#if defined(KILN_CM_MVE)
// requantize() lane by lane, each lane with its own multiplier and shift, then the output
// offset and the activation clamp.
inline int32x4_t requantize_lanes(int32x4_t x, int32x4_t mult, int32x4_t shift, const ConvArgs& a) {
  const int32x4_t zero = vdupq_n_s32(0);
  const int32x4_t neg_right = vminq_s32(shift, zero);
  x = vqrdmulhq_s32(vshlq_s32(x, vmaxq_s32(shift, zero)), mult);
  // Round half away from zero: negative values step down by one before vrshl rounds up.
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(x, neg_right), 31);
  x = vrshlq_s32(vqaddq_s32(x, fixup), neg_right);
  x = vaddq_n_s32(x, a.output_offset);
  return vminq_s32(vmaxq_s32(x, vdupq_n_s32(a.activation_min)), vdupq_n_s32(a.activation_max));
}
#endif

// Channels [begin, count) of one output pixel, one at a time.
inline void scalar_channels(const ConvArgs& a, const Window& w, int32_t begin, int32_t count, int32_t c0,
                            const int32_t* full_bias, const int32_t* bias, const int8_t* origin,
                            const int8_t* taps0, int64_t row_step, int64_t col_step, int8_t* dst) {
  const int32_t C = a.in.c;
  for (int32_t i = begin; i < count; ++i) {
    int32_t acc;
    int32_t offset;
    if (w.full) {
      acc = full_bias[i];
      offset = 0;
    } else {
      acc = bias != nullptr ? bias[c0 + i] : 0;
      offset = a.input_offset;
    }
    const int8_t* row = origin + i;
    const int8_t* wrow = taps0 + i;
    for (int32_t kh = w.kh0; kh < w.kh1; ++kh) {
      const int8_t* x = row;
      const int8_t* k = wrow;
      for (int32_t kw = w.kw0; kw < w.kw1; ++kw) {
        acc += (*x + offset) * *k;
        x += col_step;
        k += C;
      }
      row += row_step;
      wrow += a.kernel[1] * C;
    }
    dst[i] = finish(acc, c0 + i, a);
  }
}

}  // namespace

// Any depth multiplier, scalar: the reference path.
void depthwise_generic(const ConvArgs& a, int32_t multiplier, const int8_t* image, const int8_t* weight,
                       const int32_t* bias, int8_t* out) {
  const int32_t C = a.output.c;
  for (int32_t oy = 0; oy < a.output.h; ++oy) {
    for (int32_t ox = 0; ox < a.output.w; ++ox) {
      const Window w = window_at(a, oy, ox);
      int8_t* dst = out + (static_cast<int64_t>(oy) * a.output.w + ox) * C;
      for (int32_t c = 0; c < C; ++c) {
        int32_t acc = bias != nullptr ? bias[c] : 0;
        const int32_t ic = c / multiplier;
        for (int32_t kh = w.kh0; kh < w.kh1; ++kh) {
          const int32_t iy = w.iy0 + kh * a.dilation[0];
          for (int32_t kw = w.kw0; kw < w.kw1; ++kw) {
            const int32_t ix = w.ix0 + kw * a.dilation[1];
            const int32_t x = image[(static_cast<int64_t>(iy) * a.in.w + ix) * a.in.c + ic];
            acc += (x + a.input_offset) * weight[(kh * a.kernel[1] + kw) * C + c];
          }
        }
        dst[c] = finish(acc, c, a);
      }
    }
  }
}

// Depth multiplier 1: channels [c0, c0 + count) of every output pixel.
KILN_CM_HOT void depthwise_chunk(const ConvArgs& a, int32_t c0, int32_t count, const int8_t* image,
                                 const int8_t* weight, const int32_t* bias, int8_t* out) {
  const int32_t C = a.in.c;
  const int32_t taps = a.kernel[0] * a.kernel[1];
  // bias + input_offset * sum of the channel's taps: the constant part of a full window.
  int32_t full_bias[kDepthwiseChunk];
  for (int32_t i = 0; i < count; ++i) {
    int32_t sum = 0;
    for (int32_t t = 0; t < taps; ++t) sum += weight[t * C + c0 + i];
    full_bias[i] = (bias != nullptr ? bias[c0 + i] : 0) + a.input_offset * sum;
  }
  const int64_t row_step = static_cast<int64_t>(a.dilation[0]) * a.in.w * C;
  const int64_t col_step = static_cast<int64_t>(a.dilation[1]) * C;
  for (int32_t oy = 0; oy < a.output.h; ++oy) {
    for (int32_t ox = 0; ox < a.output.w; ++ox) {
      const Window w = window_at(a, oy, ox);
      const int8_t* origin = image + ((static_cast<int64_t>(w.iy0) + w.kh0 * a.dilation[0]) * a.in.w + w.ix0 +
                                      w.kw0 * a.dilation[1]) * C + c0;
      const int8_t* taps0 = weight + (w.kh0 * a.kernel[1] + w.kw0) * C + c0;
      int8_t* dst = out + (static_cast<int64_t>(oy) * a.output.w + ox) * C + c0;
#if defined(KILN_CM_MVE)
      // Eight channels at a time in 16-bit lanes; the widening multiplies give the even
      // and the odd channels' products as two int32x4 accumulators.
      const int16_t offset = static_cast<int16_t>(w.full ? 0 : a.input_offset);
      const uint32x4_t even = vidupq_n_u32(0, 2);
      for (int32_t i = 0; i < count; i += 8) {
        const int32_t left_over = count - i;
        const mve_pred16_t p8 = vctp16q(static_cast<uint32_t>(left_over));
        const mve_pred16_t pe = vctp32q(static_cast<uint32_t>((left_over + 1) / 2));
        const mve_pred16_t po = vctp32q(static_cast<uint32_t>(left_over / 2));
        const int32_t* start = w.full ? full_bias + i : (bias != nullptr ? bias + c0 + i : nullptr);
        int32x4_t acc_e = vdupq_n_s32(0);
        int32x4_t acc_o = vdupq_n_s32(0);
        if (start != nullptr) {
          acc_e = vldrwq_gather_shifted_offset_z_s32(start, even, pe);
          acc_o = vldrwq_gather_shifted_offset_z_s32(start + 1, even, po);
        }
        const int8_t* row = origin + i;
        const int8_t* wrow = taps0 + i;
        for (int32_t kh = w.kh0; kh < w.kh1; ++kh) {
          const int8_t* x = row;
          const int8_t* k = wrow;
          for (int32_t kw = w.kw0; kw < w.kw1; ++kw) {
            const int16x8_t xv = vaddq_n_s16(vldrbq_z_s16(x, p8), offset);
            const int16x8_t kv = vldrbq_z_s16(k, p8);
            acc_e = vaddq_s32(acc_e, vmullbq_int_s16(xv, kv));
            acc_o = vaddq_s32(acc_o, vmulltq_int_s16(xv, kv));
            x += col_step;
            k += C;
          }
          row += row_step;
          wrow += a.kernel[1] * C;
        }
        const int32_t* mult = a.multipliers + c0 + i;
        const int32_t* shift = a.shifts + c0 + i;
        acc_e = requantize_lanes(acc_e, vldrwq_gather_shifted_offset_z_s32(mult, even, pe),
                                 vldrwq_gather_shifted_offset_z_s32(shift, even, pe), a);
        acc_o = requantize_lanes(acc_o, vldrwq_gather_shifted_offset_z_s32(mult + 1, even, po),
                                 vldrwq_gather_shifted_offset_z_s32(shift + 1, even, po), a);
        vstrbq_scatter_offset_p_s32(dst + i, even, acc_e, pe);
        vstrbq_scatter_offset_p_s32(dst + i + 1, even, acc_o, po);
      }
#elif defined(KILN_CM_DSP)
      // Four channels at a time: SXTB16 splits a word of four int8 into the even and the
      // odd channels' halfwords, SADD16 adds the offset to both, SMLABB/SMLATT
      // multiply-accumulate each channel's bottom or top halfword (|x + offset| <= 255).
      const uint32_t offset_pair = (static_cast<uint32_t>(w.full ? 0 : a.input_offset) & 0xFFFFu) * 0x00010001u;
      int32_t i = 0;
      for (; i + 4 <= count; i += 4) {
        int32_t acc[4] = {0, 0, 0, 0};
        const int32_t* start = w.full ? full_bias + i : (bias != nullptr ? bias + c0 + i : nullptr);
        if (start != nullptr) {
          for (int32_t j = 0; j < 4; ++j) acc[j] = start[j];
        }
        const int8_t* row = origin + i;
        const int8_t* wrow = taps0 + i;
        for (int32_t kh = w.kh0; kh < w.kh1; ++kh) {
          const int8_t* x = row;
          const int8_t* k = wrow;
          for (int32_t kw = w.kw0; kw < w.kw1; ++kw) {
            const uint32_t xw = dsp_load_word(x);
            const uint32_t kw4 = dsp_load_word(k);
            const uint32_t x02 = __sadd16(__sxtb16(xw), offset_pair);
            const uint32_t x13 = __sadd16(__sxtb16(dsp_ror8(xw)), offset_pair);
            const uint32_t k02 = __sxtb16(kw4);
            const uint32_t k13 = __sxtb16(dsp_ror8(kw4));
            acc[0] = __smlabb(x02, k02, acc[0]);
            acc[2] = __smlatt(x02, k02, acc[2]);
            acc[1] = __smlabb(x13, k13, acc[1]);
            acc[3] = __smlatt(x13, k13, acc[3]);
            x += col_step;
            k += C;
          }
          row += row_step;
          wrow += a.kernel[1] * C;
        }
        for (int32_t j = 0; j < 4; ++j) dst[i + j] = finish(acc[j], c0 + i + j, a);
      }
      scalar_channels(a, w, i, count, c0, full_bias, bias, origin, taps0, row_step, col_step, dst);
#else
      scalar_channels(a, w, 0, count, c0, full_bias, bias, origin, taps0, row_step, col_step, dst);
#endif
    }
  }
}

}  // namespace cortex_m
}  // namespace kiln
