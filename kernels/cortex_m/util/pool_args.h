// Window geometry of the int8 pooling kernels.
#pragma once

#include <cstdint>

#include "kernels/cortex_m/util/args.h"

namespace kiln {
namespace cortex_m {

struct PoolArgs {
  Nhwc in;
  Nhwc output;
  int32_t kernel[2] = {1, 1};
  int32_t stride[2] = {1, 1};
  int32_t padding[2] = {0, 0};
  int32_t dilation[2] = {1, 1};
};

/// Output size of a pooling window as PyTorch computes it (ceil_mode keeps a last window
/// only if it starts inside the input or its left padding).
inline int64_t pool_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                                bool ceil_mode) {
  const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
  if (span < 0) return 0;
  int64_t out = span / stride + 1;
  if (ceil_mode && span % stride != 0) {
    out += 1;
    if ((out - 1) * stride >= in + pad) out -= 1;
  }
  return out;
}

/// Checks the window lists and the input/out tensors (int8, NHWC for `layout`) and
/// resizes out to the pooled size.
bool read_pool_args(KernelContext& ctx, const char* op, const Tensor& input, Tensor& out, Layout layout,
                    Span<const int64_t> kernel, Span<const int64_t> stride, Span<const int64_t> padding,
                    Span<const int64_t> dilation, bool ceil_mode, PoolArgs* a);

}  // namespace cortex_m
}  // namespace kiln
