// cortex_m::quantized_max_pool2d.out and cortex_m::quantized_max_pool2d_nhwc.out
//   (Tensor input, int[] kernel_size, int[] stride, int[] padding, int[] dilation,
//    bool ceil_mode, int input_zero_point, int output_zero_point, int activation_min,
//    int activation_max, *, Tensor(a!) out)
//
// The maximum of each window's input values (padding never wins), clamped to the
// activation range. Input and output share their quantization (equal zero points).
#include "kernels/cortex_m/util/flavour.h"
#include "kernels/cortex_m/util/pool_args.h"

namespace kiln {
namespace cortex_m {
namespace {

KILN_CM_HOT void max_pool(const PoolArgs& a, const int8_t* image, int8_t* out, int32_t lo, int32_t hi) {
  const int32_t C = a.in.c;
  for (int32_t oy = 0; oy < a.output.h; ++oy) {
    for (int32_t ox = 0; ox < a.output.w; ++ox) {
      int8_t* dst = out + (static_cast<int64_t>(oy) * a.output.w + ox) * C;
      const int32_t iy0 = oy * a.stride[0] - a.padding[0];
      const int32_t ix0 = ox * a.stride[1] - a.padding[1];
#if defined(KILN_CM_MVE)
      for (int32_t c = 0; c < C; c += 16) {
        const mve_pred16_t p = vctp8q(static_cast<uint32_t>(C - c));
        int8x16_t m = vdupq_n_s8(-128);
        for (int32_t kh = 0; kh < a.kernel[0]; ++kh) {
          const int32_t iy = iy0 + kh * a.dilation[0];
          if (iy < 0 || iy >= a.in.h) continue;
          for (int32_t kw = 0; kw < a.kernel[1]; ++kw) {
            const int32_t ix = ix0 + kw * a.dilation[1];
            if (ix < 0 || ix >= a.in.w) continue;
            m = vmaxq_s8(m, vldrbq_z_s8(image + (static_cast<int64_t>(iy) * a.in.w + ix) * C + c, p));
          }
        }
        m = vminq_s8(vmaxq_s8(m, vdupq_n_s8(static_cast<int8_t>(lo))), vdupq_n_s8(static_cast<int8_t>(hi)));
        vstrbq_p_s8(dst + c, m, p);
      }
#else
      for (int32_t c = 0; c < C; ++c) {
        int32_t m = -128;
        for (int32_t kh = 0; kh < a.kernel[0]; ++kh) {
          const int32_t iy = iy0 + kh * a.dilation[0];
          if (iy < 0 || iy >= a.in.h) continue;
          for (int32_t kw = 0; kw < a.kernel[1]; ++kw) {
            const int32_t ix = ix0 + kw * a.dilation[1];
            if (ix < 0 || ix >= a.in.w) continue;
            const int32_t v = image[(static_cast<int64_t>(iy) * a.in.w + ix) * C + c];
            m = v > m ? v : m;
          }
        }
        dst[c] = static_cast<int8_t>(m < lo ? lo : (m > hi ? hi : m));
      }
#endif
    }
  }
}

void max_pool2d(KernelContext& ctx, Span<EValue*> args, const char* op, Layout layout) {
  ArgReader r(ctx, op, args, 12);
  Tensor* in = r.tensor_any_layout(0);
  Span<const int64_t> kernel = r.int_list(1);
  Span<const int64_t> stride = r.int_list(2);
  Span<const int64_t> padding = r.int_list(3);
  Span<const int64_t> dilation = r.int_list(4);
  const bool ceil_mode = r.bool_value(5);
  const int64_t in_zp = r.int_value(6);
  const int64_t out_zp = r.int_value(7);
  const int64_t lo = r.int_value(8);
  const int64_t hi = r.int_value(9);
  Tensor* out = r.tensor_any_layout(10);
  if (!r.ok()) return;
  PoolArgs a;
  if (!check_activation(ctx, op, lo, hi) || !read_pool_args(ctx, op, *in, *out, layout, kernel, stride, padding, dilation, ceil_mode, &a)) {
    return;
  }
  if (in_zp != out_zp) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "input zero point %lld and output zero point %lld must be equal",
                     static_cast<long long>(in_zp), static_cast<long long>(out_zp));
    return;
  }
  const int64_t in_image = static_cast<int64_t>(a.in.h) * a.in.w * a.in.c;
  const int64_t out_image = static_cast<int64_t>(a.output.h) * a.output.w * a.in.c;
  for (int32_t n = 0; n < a.in.n; ++n) {
    max_pool(a, in->const_data_ptr<int8_t>() + n * in_image, out->mutable_data_ptr<int8_t>() + n * out_image,
             static_cast<int32_t>(lo), static_cast<int32_t>(hi));
  }
}

}  // namespace

void quantized_max_pool2d_out(KernelContext& ctx, Span<EValue*> args) {
  max_pool2d(ctx, args, "cortex_m::quantized_max_pool2d.out", Layout::ChannelsLastNchw);
}

void quantized_max_pool2d_nhwc_out(KernelContext& ctx, Span<EValue*> args) {
  max_pool2d(ctx, args, "cortex_m::quantized_max_pool2d_nhwc.out", Layout::Nhwc);
}

}  // namespace cortex_m
}  // namespace kiln
