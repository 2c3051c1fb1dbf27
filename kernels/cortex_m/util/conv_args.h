// The arguments of the quantized 2-D convolutions (plain, depthwise, transposed), read
// and checked once for every layout and flavour.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cortex_m/util/args.h"

namespace kiln {
namespace cortex_m {

struct ConvArgs {
  const Tensor* input = nullptr;
  const Tensor* weight = nullptr;
  const Tensor* bias = nullptr;  // optional
  const Tensor* scratch = nullptr;
  Tensor* out = nullptr;
  Nhwc in;
  Nhwc output;
  int32_t kernel[2] = {1, 1};  // kh, kw
  int32_t stride[2] = {1, 1};
  int32_t padding[2] = {0, 0};
  int32_t output_padding[2] = {0, 0};
  int32_t dilation[2] = {1, 1};
  int32_t input_offset = 0;
  int32_t output_offset = 0;
  const Tensor* multiplier_tensor = nullptr;
  const Tensor* shift_tensor = nullptr;
  const int32_t* multipliers = nullptr;
  const int32_t* shifts = nullptr;
  int32_t activation_min = -128;
  int32_t activation_max = 127;
};

/// Largest kernel, stride, padding and dilation the kernels take (bounds the loops and
/// keeps every offset computation inside 32 bits).
constexpr int64_t kMaxWindow = 1024;

/// Output pixels whose windows a convolution gathers (im2col) at a time.
constexpr int32_t kIm2colRows = 6;

/// Bytes `rows` gathered windows of `depth` take, rounded up to 16 so that what follows
/// them in scratch memory is aligned.
inline size_t im2col_bytes(int32_t rows, int32_t depth) {
  return (static_cast<size_t>(rows) * static_cast<size_t>(depth) + 15) & ~static_cast<size_t>(15);
}

/// Bytes of scratch memory a convolution takes whose product has `depth` = KH * KW *
/// (input channels per group): kIm2colRows gathered windows (none when `direct`, a 1x1
/// convolution that reads the pixels where they are), then the product's own
/// (gemm_scratch_bytes). The compiler sizes the scratch tensor with the rule of the
/// flavour that takes the most (python/kiln/backends/cortex_m/lowering.py:
/// conv_scratch_bytes); a smaller tensor makes the kernel fall back to the temp allocator.
size_t conv_scratch_bytes(int32_t depth, bool direct);

/// Output height/width of a convolution; < 1 when the window does not fit.
inline int64_t conv_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

/// Reads stride/padding/dilation (at `first`, `first+1`, `first+2`), then the offsets,
/// requantization tensors, activation clamp and scratch tensor that follow them, as
/// every cortex_m convolution orders them. `channels` is the output channel count.
/// Fills everything but the geometry (the caller knows its weight layout).
bool read_conv_tail(ArgReader& r, size_t first, bool has_output_padding, bool has_depth_multiplier,
                    int64_t* depth_multiplier, ConvArgs* args);

/// Checks per-channel parameters and bias against `channels` output channels, then
/// the output geometry against the computed one, resizing `out`.
bool finish_conv_args(KernelContext& ctx, const char* op, Layout layout, int32_t channels,
                      int64_t out_h, int64_t out_w, ConvArgs* args);

}  // namespace cortex_m
}  // namespace kiln
