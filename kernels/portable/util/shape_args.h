// Turning size-list arguments into output shapes (view_copy, et_view, expand_copy, full,
// and the other creation ops).
#pragma once

#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

/// Converts a size list to sizes, inferring at most one -1 from `numel` (pass
/// infer=false to reject -1). Fails the kernel when the list is longer than
/// kTensorMaxDim, has another negative size, or (with infer) does not hold `numel`
/// elements.
inline bool sizes_from_list(KernelContext& ctx, const char* op, Span<const int64_t> list, bool infer,
                            size_t numel, SizesType* sizes) {
  if (list.size() > static_cast<size_t>(kTensorMaxDim)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "size list has %zu entries, at most %d",
                     list.size(), static_cast<int>(kTensorMaxDim));
    return false;
  }
  int32_t inferred = -1;
  size_t known = 1;
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] == -1 && infer && inferred < 0) {
      inferred = static_cast<int32_t>(i);
      continue;
    }
    if (list[i] < 0 || list[i] > INT32_MAX) {
      KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "size %lld at position %zu is invalid",
                       static_cast<long long>(list[i]), i);
      return false;
    }
    sizes[i] = static_cast<SizesType>(list[i]);
    known *= static_cast<size_t>(list[i]);
  }
  if (inferred >= 0) {
    if (known == 0 || numel % known != 0) {
      KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "cannot infer size -1: %zu elements over %zu",
                       numel, known);
      return false;
    }
    sizes[inferred] = static_cast<SizesType>(numel / known);
    known = numel;
  }
  if (infer && known != numel) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "a view with %zu elements of a tensor with %zu",
                     known, numel);
    return false;
  }
  return true;
}

/// The checks of a slice of `in` along dim_arg (slice_copy, slice_scatter): in has dims,
/// step is positive, the dim is valid (normalized into *dim).
inline bool check_slice(KernelContext& ctx, const char* op, const Tensor& in, int64_t dim_arg, int64_t step,
                        int32_t* dim) {
  if (in.dim() == 0 || step <= 0) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "cannot slice %s with step %lld", ShapeString(in).c_str(),
                     static_cast<long long>(step));
    return false;
  }
  return normalize_dim(ctx, op, dim_arg, in.dim(), dim);
}

/// Python slicing of a dim of `size` with step > 0: negative start / end count from the
/// end, both are clamped to [0, size] (end None: size). *first is the first element,
/// *count how many the slice takes (no overflow for any step).
inline void python_slice(int64_t size, int64_t start, bool has_end, int64_t end, int64_t step, int64_t* first,
                         int64_t* count) {
  if (!has_end) end = size;
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = start < 0 ? 0 : (start > size ? size : start);
  end = end < start ? start : (end > size ? size : end);
  *first = start;
  *count = end > start ? (end - start - 1) / step + 1 : 0;
}

/// Resizes `out` to the sizes of `list` (no -1 inference); fails the kernel otherwise.
inline bool resize_to_size_list(KernelContext& ctx, const char* op, Span<const int64_t> list, Tensor& out) {
  SizesType sizes[kTensorMaxDim];
  return sizes_from_list(ctx, op, list, false, 0, sizes) && resize_output(ctx, op, out, {sizes, list.size()});
}

}  // namespace portable
}  // namespace kiln
