// cortex_m::quantized_avg_pool2d.out and cortex_m::quantized_avg_pool2d_nhwc.out
//   (Tensor input, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode,
//    int zero_point, int multiplier, int shift, Tensor scratch, *, Tensor(a!) out)
//
// CMSIS-NN's int8 average: the sum of the window's input values (padding not counted)
// divided by their count, rounded half away from zero. Input and output share their
// quantization, so zero_point, multiplier and shift do not change the integers.
#include "kernels/cortex_m/util/flavour.h"
#include "kernels/cortex_m/util/pool_args.h"

namespace kiln {
namespace cortex_m {
namespace {

KILN_CM_HOT void avg_pool(const PoolArgs& a, const int8_t* image, int8_t* out) {
  const int32_t C = a.in.c;
  for (int32_t oy = 0; oy < a.output.h; ++oy) {
    const int32_t iy0 = oy * a.stride[0] - a.padding[0];
    const int32_t ky0 = iy0 < 0 ? -iy0 : 0;
    const int32_t ky1 = a.kernel[0] < a.in.h - iy0 ? a.kernel[0] : a.in.h - iy0;
    for (int32_t ox = 0; ox < a.output.w; ++ox) {
      const int32_t ix0 = ox * a.stride[1] - a.padding[1];
      const int32_t kx0 = ix0 < 0 ? -ix0 : 0;
      const int32_t kx1 = a.kernel[1] < a.in.w - ix0 ? a.kernel[1] : a.in.w - ix0;
      const int32_t count = (ky1 - ky0) * (kx1 - kx0);
      int8_t* dst = out + (static_cast<int64_t>(oy) * a.output.w + ox) * C;
      for (int32_t c = 0; c < C; ++c) {
        int32_t sum = 0;
        for (int32_t ky = ky0; ky < ky1; ++ky) {
          const int8_t* row = image + (static_cast<int64_t>(iy0 + ky) * a.in.w + ix0) * C + c;
          for (int32_t kx = kx0; kx < kx1; ++kx) sum += row[static_cast<int64_t>(kx) * C];
        }
        const int32_t avg = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
        dst[c] = static_cast<int8_t>(avg < -128 ? -128 : (avg > 127 ? 127 : avg));
      }
    }
  }
}

void avg_pool2d(KernelContext& ctx, Span<EValue*> args, const char* op, Layout layout) {
  ArgReader r(ctx, op, args, 11);
  Tensor* in = r.tensor_any_layout(0);
  Span<const int64_t> kernel = r.int_list(1);
  Span<const int64_t> stride = r.int_list(2);
  Span<const int64_t> padding = r.int_list(3);
  const bool ceil_mode = r.bool_value(4);
  (void)r.int_value(5);  // zero point, multiplier and shift: the same scale in and out
  (void)r.int_value(6);
  (void)r.int_value(7);
  (void)r.tensor(8);  // scratch: not needed
  Tensor* out = r.tensor_any_layout(9);
  if (!r.ok()) return;
  static constexpr int64_t kNoDilation[2] = {1, 1};
  PoolArgs a;
  if (!read_pool_args(ctx, op, *in, *out, layout, kernel, stride, padding, {kNoDilation, 2}, ceil_mode, &a)) return;
  if (static_cast<int64_t>(a.kernel[0]) * a.kernel[1] > (int64_t{1} << 23)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "window %dx%d is too large for a 32-bit sum", static_cast<int>(a.kernel[0]),
                     static_cast<int>(a.kernel[1]));
    return;
  }
  const int64_t in_image = static_cast<int64_t>(a.in.h) * a.in.w * a.in.c;
  const int64_t out_image = static_cast<int64_t>(a.output.h) * a.output.w * a.in.c;
  for (int32_t n = 0; n < a.in.n; ++n) {
    avg_pool(a, in->const_data_ptr<int8_t>() + n * in_image, out->mutable_data_ptr<int8_t>() + n * out_image);
  }
}

}  // namespace

void quantized_avg_pool2d_out(KernelContext& ctx, Span<EValue*> args) {
  avg_pool2d(ctx, args, "cortex_m::quantized_avg_pool2d.out", Layout::ChannelsLastNchw);
}

void quantized_avg_pool2d_nhwc_out(KernelContext& ctx, Span<EValue*> args) {
  avg_pool2d(ctx, args, "cortex_m::quantized_avg_pool2d_nhwc.out", Layout::Nhwc);
}

}  // namespace cortex_m
}  // namespace kiln
