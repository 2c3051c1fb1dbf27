#include "kernels/cortex_m/util/conv_args.h"

#include "kernels/cortex_m/util/gemm_s8.h"

namespace kiln {
namespace cortex_m {

size_t conv_scratch_bytes(int32_t depth, bool direct) {
  return (direct ? 0 : im2col_bytes(kIm2colRows, depth)) + gemm_scratch_bytes(depth);
}

bool read_conv_tail(ArgReader& r, size_t first, bool has_output_padding, bool has_depth_multiplier,
                    int64_t* depth_multiplier, ConvArgs* a) {
  KernelContext& ctx = r.context();
  const char* op = r.op();
  size_t i = first;
  Span<const int64_t> stride = r.int_list(i++);
  Span<const int64_t> padding = r.int_list(i++);
  Span<const int64_t> output_padding;
  if (has_output_padding) output_padding = r.int_list(i++);
  Span<const int64_t> dilation = r.int_list(i++);
  if (has_depth_multiplier) *depth_multiplier = r.int_value(i++);
  const int64_t input_offset = r.int_value(i++);
  const int64_t output_offset = r.int_value(i++);
  a->multiplier_tensor = r.tensor(i++);  // checked by finish_conv_args
  a->shift_tensor = r.tensor(i++);
  const int64_t activation_min = r.int_value(i++);
  const int64_t activation_max = r.int_value(i++);
  a->scratch = r.tensor(i++);
  if (has_output_padding) (void)r.tensor(i++);  // output_scratch: not needed
  if (!r.ok()) return false;
  if (!read_pair(ctx, op, stride, 1, kMaxWindow, "stride", a->stride) ||
      !read_pair(ctx, op, padding, 0, kMaxWindow, "padding", a->padding) ||
      !read_pair(ctx, op, dilation, 1, kMaxWindow, "dilation", a->dilation) ||
      (has_output_padding && !read_pair(ctx, op, output_padding, 0, kMaxWindow, "output_padding", a->output_padding)) ||
      !check_range(ctx, op, input_offset, -127, 128, "input_offset (minus the input zero point)") ||
      !check_range(ctx, op, output_offset, -128, 127, "output_offset (the output zero point)") ||
      !check_activation(ctx, op, activation_min, activation_max)) {
    return false;
  }
  a->input_offset = static_cast<int32_t>(input_offset);
  a->output_offset = static_cast<int32_t>(output_offset);
  a->activation_min = static_cast<int32_t>(activation_min);
  a->activation_max = static_cast<int32_t>(activation_max);
  return true;
}

bool finish_conv_args(KernelContext& ctx, const char* op, Layout layout, int32_t channels,
                      int64_t out_h, int64_t out_w, ConvArgs* a) {
  if (!check_per_channel_params(ctx, op, *a->multiplier_tensor, *a->shift_tensor, channels) ||
      !check_bias(ctx, op, a->bias, channels, "bias")) {
    return false;
  }
  if (out_h < 1 || out_w < 1 || out_h > INT32_MAX || out_w > INT32_MAX) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op,
                     "input %dx%d with kernel %dx%d, stride %d/%d, padding %d/%d, dilation %d/%d gives "
                     "no output (%lldx%lld)",
                     static_cast<int>(a->in.h), static_cast<int>(a->in.w), static_cast<int>(a->kernel[0]),
                     static_cast<int>(a->kernel[1]), static_cast<int>(a->stride[0]), static_cast<int>(a->stride[1]),
                     static_cast<int>(a->padding[0]), static_cast<int>(a->padding[1]), static_cast<int>(a->dilation[0]),
                     static_cast<int>(a->dilation[1]), static_cast<long long>(out_h),
                     static_cast<long long>(out_w));
    return false;
  }
  a->output = {a->in.n, static_cast<int32_t>(out_h), static_cast<int32_t>(out_w), channels};
  if (!resize_activation(ctx, op, *a->out, layout, a->output)) return false;
  Nhwc written;
  if (!activation_geometry(ctx, op, *a->out, layout, "out", &written)) return false;
  a->multipliers = a->multiplier_tensor->const_data_ptr<int32_t>();
  a->shifts = a->shift_tensor->const_data_ptr<int32_t>();
  return true;
}

}  // namespace cortex_m
}  // namespace kiln
