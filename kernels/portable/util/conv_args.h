// Reading convolution's per-spatial-dimension lists (stride, padding, dilation,
// output_padding), shared by convolution and convolution_backward.
#pragma once

#include <cstdint>

#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

/// Reads a list with one entry per spatial dim (or one for all) into [h, w]. 1-D
/// convolutions (run as 2-D with height 1) get `neutral` as their height (1 for
/// stride and dilation, 0 for paddings). Values must lie in [min_value, 2^31).
inline bool read_spatial_pair(KernelContext& ctx, const char* op, Span<const int64_t> list, int32_t spatial_dims,
                              int64_t neutral, const char* what, int64_t min_value, int64_t* h, int64_t* w) {
  if (list.size() != 1 && list.size() != static_cast<size_t>(spatial_dims)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "%s has %zu entries for %d spatial dims", what, list.size(),
                     static_cast<int>(spatial_dims));
    return false;
  }
  *h = spatial_dims == 2 ? list[0] : neutral;
  *w = list[list.size() - 1];
  if (*h < min_value || *w < min_value || *h > INT32_MAX || *w > INT32_MAX) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "%s must be in [%lld, 2^31)", what,
                     static_cast<long long>(min_value));
    return false;
  }
  return true;
}

}  // namespace portable
}  // namespace kiln
