// Shared parameter handling for 2-D pooling (max_pool2d_with_indices, avg_pool2d).
#pragma once

#include <cstdint>

#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

/// Pooling window geometry for an input viewed as [planes, in_h, in_w].
struct Pool2dShape {
  int64_t planes, in_h, in_w, out_h, out_w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
};

namespace pool_detail {

/// One size per spatial dimension from a list of 1 or 2 entries (or `fallback` pair
/// when empty and `allow_empty`).
inline bool pair(KernelContext& ctx, const char* op, Span<const int64_t> list, const char* what,
                 bool allow_empty, int64_t fallback_h, int64_t fallback_w, int64_t min_value,
                 int64_t* h, int64_t* w) {
  if (list.empty() && allow_empty) {
    *h = fallback_h;
    *w = fallback_w;
    return true;
  }
  if (list.size() != 1 && list.size() != 2) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "%s must have 1 or 2 entries, got %zu", what,
                     list.size());
    return false;
  }
  *h = list[0];
  *w = list[list.size() - 1];
  if (*h < min_value || *w < min_value) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "%s (%lld, %lld) must be >= %lld", what,
                     static_cast<long long>(*h), static_cast<long long>(*w),
                     static_cast<long long>(min_value));
    return false;
  }
  return true;
}

/// PyTorch's pooling output size, including the ceil_mode rule that the last window
/// must start inside the input or the left padding.
inline int64_t output_size(int64_t in, int64_t kernel, int64_t pad, int64_t stride,
                           int64_t dilation, bool ceil_mode) {
  const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  if (span < 0) return 0;
  int64_t out = span / stride + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

}  // namespace pool_detail

/// Reads the kernel/stride/padding/dilation lists into `s` (an empty stride is the
/// kernel, an empty dilation 1).
inline bool read_pool2d_window(KernelContext& ctx, const char* op, Span<const int64_t> kernel,
                               Span<const int64_t> stride, Span<const int64_t> padding,
                               Span<const int64_t> dilation, Pool2dShape* s) {
  using pool_detail::pair;
  return pair(ctx, op, kernel, "kernel_size", false, 0, 0, 1, &s->kernel_h, &s->kernel_w) &&
         pair(ctx, op, stride, "stride", true, s->kernel_h, s->kernel_w, 1, &s->stride_h, &s->stride_w) &&
         pair(ctx, op, padding, "padding", false, 0, 0, 0, &s->pad_h, &s->pad_w) &&
         pair(ctx, op, dilation, "dilation", true, 1, 1, 1, &s->dilation_h, &s->dilation_w);
}

/// Reads kernel/stride/padding/dilation lists, checks them against `in` (3-D or 4-D)
/// and resizes `out` to the pooled shape. False (kernel failed) on any problem.
inline bool make_pool2d_shape(KernelContext& ctx, const char* op, const Tensor& in,
                              Span<const int64_t> kernel, Span<const int64_t> stride,
                              Span<const int64_t> padding, Span<const int64_t> dilation,
                              bool ceil_mode, Tensor& out, Pool2dShape* s) {
  if (in.dim() != 3 && in.dim() != 4) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "input must be 3-D or 4-D, got %s",
                     ShapeString(in).c_str());
    return false;
  }
  if (!read_pool2d_window(ctx, op, kernel, stride, padding, dilation, s)) return false;
  const int64_t eff_h = (s->kernel_h - 1) * s->dilation_h + 1;
  const int64_t eff_w = (s->kernel_w - 1) * s->dilation_w + 1;
  if (s->pad_h * 2 > eff_h || s->pad_w * 2 > eff_w) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op,
                     "padding (%lld, %lld) must be at most half the kernel (%lld, %lld)",
                     static_cast<long long>(s->pad_h), static_cast<long long>(s->pad_w),
                     static_cast<long long>(eff_h), static_cast<long long>(eff_w));
    return false;
  }
  s->in_h = in.size(-2);
  s->in_w = in.size(-1);
  s->planes = in.dim() == 4 ? static_cast<int64_t>(in.size(0)) * in.size(1) : in.size(0);
  s->out_h = pool_detail::output_size(s->in_h, s->kernel_h, s->pad_h, s->stride_h, s->dilation_h, ceil_mode);
  s->out_w = pool_detail::output_size(s->in_w, s->kernel_w, s->pad_w, s->stride_w, s->dilation_w, ceil_mode);
  if (s->out_h <= 0 || s->out_w <= 0) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "input %s is too small for the window",
                     ShapeString(in).c_str());
    return false;
  }
  SizesType sizes[4];
  for (int32_t d = 0; d < in.dim() - 2; ++d) sizes[d] = in.size(d);
  sizes[in.dim() - 2] = static_cast<SizesType>(s->out_h);
  sizes[in.dim() - 1] = static_cast<SizesType>(s->out_w);
  return resize_output(ctx, op, out, {sizes, static_cast<size_t>(in.dim())});
}

}  // namespace portable
}  // namespace kiln
