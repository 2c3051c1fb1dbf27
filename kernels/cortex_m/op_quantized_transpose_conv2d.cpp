// cortex_m::quantized_transpose_conv2d.out and cortex_m::quantized_transpose_conv2d_nhwc.out
//   (Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
//    int[] output_padding, int[] dilation, int input_offset, int output_offset,
//    Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min,
//    int activation_max, Tensor scratch, Tensor output_scratch, *, Tensor(a!) out)
//
// int8 transposed convolution (one group), CMSIS-NN arithmetic as quantized_conv2d.
// Weights are OHWI. Each output pixel gathers the input pixels whose scattered window
// covers it: input y contributes to output y * stride - padding + k * dilation.
#include "kernels/cortex_m/util/conv_args.h"
#include "kernels/cortex_m/util/requantize.h"

namespace kiln {
namespace cortex_m {
namespace {

void transpose_conv2d(KernelContext& ctx, Span<EValue*> args, const char* op, Layout layout) {
  ArgReader r(ctx, op, args, 17);
  ConvArgs a;
  a.input = r.tensor_any_layout(0);
  a.weight = r.tensor(1);
  a.bias = r.optional_tensor(2);
  a.out = r.tensor_any_layout(15);
  if (!r.ok() || !read_conv_tail(r, 3, true, false, nullptr, &a)) return;
  if (!check_int8(ctx, op, *a.input, "input") || !check_int8(ctx, op, *a.weight, "weight") ||
      !check_int8(ctx, op, *a.out, "out") ||
      !activation_geometry(ctx, op, *a.input, layout, "input", &a.in)) {
    return;
  }
  if (a.weight->dim() != 4 || a.weight->size(3) != a.in.c || a.weight->size(1) > kMaxWindow ||
      a.weight->size(2) > kMaxWindow) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "weight %s must be OHWI with I = %d input channels (one group)",
                     portable::ShapeString(*a.weight).c_str(), static_cast<int>(a.in.c));
    return;
  }
  const int32_t out_channels = a.weight->size(0);
  a.kernel[0] = a.weight->size(1);
  a.kernel[1] = a.weight->size(2);
  int64_t size[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t in = i == 0 ? a.in.h : a.in.w;
    size[i] = (in - 1) * a.stride[i] - 2 * a.padding[i] + static_cast<int64_t>(a.dilation[i]) * (a.kernel[i] - 1) +
              a.output_padding[i] + 1;
  }
  if (!finish_conv_args(ctx, op, layout, out_channels, size[0], size[1], &a)) return;
  const int8_t* input = a.input->const_data_ptr<int8_t>();
  const int8_t* weight = a.weight->const_data_ptr<int8_t>();
  const int32_t* bias = a.bias != nullptr ? a.bias->const_data_ptr<int32_t>() : nullptr;
  int8_t* out = a.out->mutable_data_ptr<int8_t>();
  const int32_t C = a.in.c;
  for (int32_t n = 0; n < a.in.n; ++n) {
    const int8_t* image = input + static_cast<int64_t>(n) * a.in.h * a.in.w * C;
    for (int32_t oy = 0; oy < a.output.h; ++oy) {
      for (int32_t ox = 0; ox < a.output.w; ++ox) {
        int8_t* dst = out + ((static_cast<int64_t>(n) * a.output.h + oy) * a.output.w + ox) * out_channels;
        for (int32_t o = 0; o < out_channels; ++o) {
          int32_t acc = bias != nullptr ? bias[o] : 0;
          for (int32_t kh = 0; kh < a.kernel[0]; ++kh) {
            const int32_t ty = oy + a.padding[0] - kh * a.dilation[0];
            if (ty < 0 || ty % a.stride[0] != 0 || ty / a.stride[0] >= a.in.h) continue;
            for (int32_t kw = 0; kw < a.kernel[1]; ++kw) {
              const int32_t tx = ox + a.padding[1] - kw * a.dilation[1];
              if (tx < 0 || tx % a.stride[1] != 0 || tx / a.stride[1] >= a.in.w) continue;
              const int8_t* x = image + (static_cast<int64_t>(ty / a.stride[0]) * a.in.w + tx / a.stride[1]) * C;
              const int8_t* w = weight + ((static_cast<int64_t>(o) * a.kernel[0] + kh) * a.kernel[1] + kw) * C;
              for (int32_t c = 0; c < C; ++c) acc += (x[c] + a.input_offset) * w[c];
            }
          }
          const int32_t y = requantize(acc, a.multipliers[o], a.shifts[o]) + a.output_offset;
          dst[o] = static_cast<int8_t>(clamp(y, a.activation_min, a.activation_max));
        }
      }
    }
  }
}

}  // namespace

void quantized_transpose_conv2d_out(KernelContext& ctx, Span<EValue*> args) {
  transpose_conv2d(ctx, args, "cortex_m::quantized_transpose_conv2d.out", Layout::ChannelsLastNchw);
}

void quantized_transpose_conv2d_nhwc_out(KernelContext& ctx, Span<EValue*> args) {
  transpose_conv2d(ctx, args, "cortex_m::quantized_transpose_conv2d_nhwc.out", Layout::Nhwc);
}

}  // namespace cortex_m
}  // namespace kiln
