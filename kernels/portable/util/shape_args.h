// Turning size-list arguments into output shapes (view_copy, et_view, expand_copy, full).
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

}  // namespace portable
}  // namespace kiln
