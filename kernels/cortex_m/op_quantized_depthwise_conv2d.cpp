// cortex_m::quantized_depthwise_conv2d.out and cortex_m::quantized_depthwise_conv2d_nhwc.out
//   (Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
//    int[] dilation, int depth_multiplier, int input_offset, int output_offset,
//    Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min,
//    int activation_max, Tensor scratch, *, Tensor(a!) out)
//
// Output channel o reads input channel o / depth_multiplier; weights are [1, KH, KW, O].
// Same arithmetic as quantized_conv2d. Channels are the vector dimension (NHWC keeps
// them contiguous); pixels whose window lies inside the image use a per-channel constant
// bias + input_offset * sum(w) precomputed for a chunk of channels, border pixels add the
// offset tap by tap.
#include "kernels/cortex_m/util/conv_args.h"
#include "kernels/cortex_m/util/flavour.h"
#include "kernels/cortex_m/util/requantize.h"

namespace kiln {
namespace cortex_m {
namespace {

constexpr int32_t kChunk = 64;

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
  int32_t full_bias[kChunk];
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
#else
      for (int32_t i = 0; i < count; ++i) {
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
#endif
    }
  }
}

void depthwise_conv2d(KernelContext& ctx, Span<EValue*> args, const char* op, Layout layout) {
  ArgReader r(ctx, op, args, 16);
  ConvArgs a;
  int64_t multiplier = 1;
  a.input = r.tensor_any_layout(0);
  a.weight = r.tensor(1);
  a.bias = r.optional_tensor(2);
  a.out = r.tensor_any_layout(14);
  if (!r.ok() || !read_conv_tail(r, 3, false, true, &multiplier, &a)) return;
  if (!check_int8(ctx, op, *a.input, "input") || !check_int8(ctx, op, *a.weight, "weight") ||
      !check_int8(ctx, op, *a.out, "out") ||
      !activation_geometry(ctx, op, *a.input, layout, "input", &a.in)) {
    return;
  }
  if (a.weight->dim() != 4 || a.weight->size(0) != 1) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "weight must be [1, KH, KW, C_out], has sizes %s",
                     portable::ShapeString(*a.weight).c_str());
    return;
  }
  const int32_t out_channels = a.weight->size(3);
  a.kernel[0] = a.weight->size(1);
  a.kernel[1] = a.weight->size(2);
  if (multiplier < 1 || multiplier > INT32_MAX / (a.in.c > 0 ? a.in.c : 1) ||
      static_cast<int64_t>(a.in.c) * multiplier != out_channels || a.kernel[0] < 1 || a.kernel[1] < 1 ||
      a.kernel[0] > kMaxWindow || a.kernel[1] > kMaxWindow) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op,
                     "%d input channels x depth multiplier %lld must equal the weight's %d output channels "
                     "(kernel %dx%d)",
                     static_cast<int>(a.in.c), static_cast<long long>(multiplier), static_cast<int>(out_channels),
                     static_cast<int>(a.kernel[0]), static_cast<int>(a.kernel[1]));
    return;
  }
  if (!finish_conv_args(ctx, op, layout, out_channels,
                        conv_output_size(a.in.h, a.kernel[0], a.stride[0], a.padding[0], a.dilation[0]),
                        conv_output_size(a.in.w, a.kernel[1], a.stride[1], a.padding[1], a.dilation[1]), &a)) {
    return;
  }
  const int8_t* input = a.input->const_data_ptr<int8_t>();
  const int8_t* weight = a.weight->const_data_ptr<int8_t>();
  const int32_t* bias = a.bias != nullptr ? a.bias->const_data_ptr<int32_t>() : nullptr;
  int8_t* out = a.out->mutable_data_ptr<int8_t>();
  const int64_t in_image = static_cast<int64_t>(a.in.h) * a.in.w * a.in.c;
  const int64_t out_image = static_cast<int64_t>(a.output.h) * a.output.w * out_channels;
  for (int32_t n = 0; n < a.in.n; ++n) {
    if (multiplier != 1) {
      depthwise_generic(a, static_cast<int32_t>(multiplier), input + n * in_image, weight, bias, out + n * out_image);
      continue;
    }
    for (int32_t c0 = 0; c0 < out_channels; c0 += kChunk) {
      const int32_t count = out_channels - c0 < kChunk ? out_channels - c0 : kChunk;
      depthwise_chunk(a, c0, count, input + n * in_image, weight, bias, out + n * out_image);
    }
  }
}

}  // namespace

void quantized_depthwise_conv2d_out(KernelContext& ctx, Span<EValue*> args) {
  depthwise_conv2d(ctx, args, "cortex_m::quantized_depthwise_conv2d.out", Layout::ChannelsLastNchw);
}

void quantized_depthwise_conv2d_nhwc_out(KernelContext& ctx, Span<EValue*> args) {
  depthwise_conv2d(ctx, args, "cortex_m::quantized_depthwise_conv2d_nhwc.out", Layout::Nhwc);
}

}  // namespace cortex_m
}  // namespace kiln
