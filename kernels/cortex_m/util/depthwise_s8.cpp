// The scalar depthwise convolution (the portable flavour's, and every flavour's fallback)
// and the window geometry the vector flavours share.
#include "kernels/cortex_m/util/depthwise_s8.h"

#include "kernels/cortex_m/util/flavour.h"
#include "kernels/cortex_m/util/requantize.h"

namespace kiln {
namespace cortex_m {

InteriorRange interior_range(int32_t in, int32_t out, int32_t kernel, int32_t stride, int32_t padding,
                             int32_t dilation) {
  // Output o reads o * stride - padding + k * dilation for k < kernel.
  const int64_t span = static_cast<int64_t>(kernel - 1) * dilation;
  InteriorRange r;
  r.first = static_cast<int32_t>((padding + stride - 1) / stride);
  const int64_t last_start = static_cast<int64_t>(in) - 1 - span + padding;  // largest o * stride allowed
  r.last = last_start < 0 ? 0 : static_cast<int32_t>(last_start / stride + 1);
  if (r.last > out) r.last = out;
  if (r.first > r.last) r.first = r.last;
  return r;
}

void depthwise_s8_scalar(const ConvArgs& a, int32_t multiplier, const int8_t* image, const int8_t* weight,
                         const int32_t* bias, int8_t* out) {
  const int32_t C = a.output.c;
  for (int32_t oy = 0; oy < a.output.h; ++oy) {
    const int32_t iy0 = oy * a.stride[0] - a.padding[0];
    for (int32_t ox = 0; ox < a.output.w; ++ox) {
      const int32_t ix0 = ox * a.stride[1] - a.padding[1];
      int8_t* dst = out + (static_cast<int64_t>(oy) * a.output.w + ox) * C;
      for (int32_t c = 0; c < C; ++c) {
        int32_t acc = bias != nullptr ? bias[c] : 0;
        const int32_t ic = c / multiplier;
        for (int32_t kh = 0; kh < a.kernel[0]; ++kh) {
          const int32_t iy = iy0 + kh * a.dilation[0];
          if (iy < 0 || iy >= a.in.h) continue;
          for (int32_t kw = 0; kw < a.kernel[1]; ++kw) {
            const int32_t ix = ix0 + kw * a.dilation[1];
            if (ix < 0 || ix >= a.in.w) continue;
            const int32_t x = image[(static_cast<int64_t>(iy) * a.in.w + ix) * a.in.c + ic];
            acc += (x + a.input_offset) * weight[(kh * a.kernel[1] + kw) * C + c];
          }
        }
        const int32_t y = requantize(acc, a.multipliers[c], a.shifts[c]) + a.output_offset;
        dst[c] = static_cast<int8_t>(clamp(y, a.activation_min, a.activation_max));
      }
    }
  }
}

#if !defined(KILN_CM_MVE) && !defined(KILN_CM_DSP)
void depthwise_s8(const ConvArgs& a, int32_t multiplier, const int8_t* image, const int8_t* weight,
                  const int32_t* bias, int8_t* out) {
  depthwise_s8_scalar(a, multiplier, image, weight, bias, out);
}
#endif

}  // namespace cortex_m
}  // namespace kiln
