#include "kernels/cortex_m/util/pool_args.h"

#include "kernels/cortex_m/util/conv_args.h"

namespace kiln {
namespace cortex_m {

bool read_pool_args(KernelContext& ctx, const char* op, const Tensor& input, Tensor& out, Layout layout,
                    Span<const int64_t> kernel, Span<const int64_t> stride, Span<const int64_t> padding,
                    Span<const int64_t> dilation, bool ceil_mode, PoolArgs* a) {
  if (!check_int8(ctx, op, input, "input") || !check_int8(ctx, op, out, "out") ||
      !activation_geometry(ctx, op, input, layout, "input", &a->in) ||
      !read_pair(ctx, op, kernel, 1, kMaxWindow, "kernel_size", a->kernel) ||
      !read_pair(ctx, op, stride.size() == 0 ? kernel : stride, 1, kMaxWindow, "stride", a->stride) ||
      !read_pair(ctx, op, padding, 0, kMaxWindow, "padding", a->padding) ||
      !read_pair(ctx, op, dilation, 1, kMaxWindow, "dilation", a->dilation)) {
    return false;
  }
  const int64_t oh = pool_output_size(a->in.h, a->kernel[0], a->stride[0], a->padding[0], a->dilation[0], ceil_mode);
  const int64_t ow = pool_output_size(a->in.w, a->kernel[1], a->stride[1], a->padding[1], a->dilation[1], ceil_mode);
  if (oh < 1 || ow < 1 || 2 * a->padding[0] > a->kernel[0] || 2 * a->padding[1] > a->kernel[1]) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op,
                     "input %dx%d, kernel %dx%d, stride %d/%d, padding %d/%d: no output, or padding over half the "
                     "kernel",
                     static_cast<int>(a->in.h), static_cast<int>(a->in.w), static_cast<int>(a->kernel[0]),
                     static_cast<int>(a->kernel[1]), static_cast<int>(a->stride[0]), static_cast<int>(a->stride[1]),
                     static_cast<int>(a->padding[0]), static_cast<int>(a->padding[1]));
    return false;
  }
  a->output = {a->in.n, static_cast<int32_t>(oh), static_cast<int32_t>(ow), a->in.c};
  Nhwc written;
  return resize_activation(ctx, op, out, layout, a->output) &&
         activation_geometry(ctx, op, out, layout, "out", &written);
}

}  // namespace cortex_m
}  // namespace kiln
