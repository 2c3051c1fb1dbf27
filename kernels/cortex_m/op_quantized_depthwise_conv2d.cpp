// cortex_m::quantized_depthwise_conv2d.out and cortex_m::quantized_depthwise_conv2d_nhwc.out
//   (Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
//    int[] dilation, int depth_multiplier, int input_offset, int output_offset,
//    Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min,
//    int activation_max, Tensor scratch, *, Tensor(a!) out)
//
// Output channel o reads input channel o / depth_multiplier; weights are [1, KH, KW, O].
// Same arithmetic as quantized_conv2d; the loops are in util/depthwise_s8*.cpp.
#include "kernels/cortex_m/util/conv_args.h"
#include "kernels/cortex_m/util/depthwise_s8.h"

namespace kiln {
namespace cortex_m {
namespace {

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
    depthwise_s8(a, static_cast<int32_t>(multiplier), input + n * in_image, weight, bias, out + n * out_image);
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
