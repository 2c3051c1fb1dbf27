// Argument checks shared by the Cortex-M kernels.
//
// The cortex_m:: operators come in two layouts. The plain ones (quantized_conv2d, ...)
// take 4-D activations with NCHW sizes stored channels-last (dim order 0, 2, 3, 1, as
// ExecuTorch's Cortex-M passes emit them); the *_nhwc ones take contiguous NHWC tensors.
// Either way the kernels see the same NHWC bytes. Anything a kernel cannot take (dtype,
// layout, sizes, a shift or multiplier out of range, a scratch buffer too small) fails
// the kernel with a named error and a log line with the numbers, before any data is read.
#pragma once

#include <cstdint>

#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace cortex_m {

using portable::ArgReader;

/// A 4-D activation as the kernels address it: NHWC, contiguous.
struct Nhwc {
  int32_t n = 0, h = 0, w = 0, c = 0;
  int64_t pixels() const { return static_cast<int64_t>(n) * h * w; }
};

/// Which layout an operator's activations have (see the top of this file).
enum class Layout { ChannelsLastNchw, Nhwc };

/// Reads `t`'s NHWC geometry, checking that its bytes are NHWC for `layout`.
bool activation_geometry(KernelContext& ctx, const char* op, const Tensor& t, Layout layout,
                         const char* what, Nhwc* out);

/// Resizes `out` to the NHWC geometry `g` expressed in `layout`'s sizes.
bool resize_activation(KernelContext& ctx, const char* op, Tensor& out, Layout layout, const Nhwc& g);

/// Fails unless `t` is int8.
bool check_int8(KernelContext& ctx, const char* op, const Tensor& t, const char* what);

/// Fails unless `value` lies in [lo, hi]; `what` names it in the log line.
bool check_range(KernelContext& ctx, const char* op, int64_t value, int64_t lo, int64_t hi,
                 const char* what);

/// A (multiplier, shift) pair: multiplier in [0, 2^31), shift in [kMinShift, kMaxShift].
bool check_requantize_params(KernelContext& ctx, const char* op, int64_t multiplier,
                             int64_t shift, const char* what);

/// check_requantize_params for a multiplier that may be negative (-2^31 excluded, so that
/// the doubling high multiply never saturates): an operand of quantized_add that is
/// subtracted.
bool check_signed_requantize_params(KernelContext& ctx, const char* op, int64_t multiplier,
                                    int64_t shift, const char* what);

/// Per-channel multipliers and shifts: int32 tensors of `channels` elements each, every
/// pair checked as check_requantize_params does.
bool check_per_channel_params(KernelContext& ctx, const char* op, const Tensor& multipliers,
                              const Tensor& shifts, int32_t channels);

/// An optional int32 bias of `channels` elements.
bool check_bias(KernelContext& ctx, const char* op, const Tensor* bias, int32_t channels,
                const char* what);

/// Two-element int lists (stride, padding, dilation, kernel size); a single element
/// means both. Values must lie in [lo, hi].
bool read_pair(KernelContext& ctx, const char* op, Span<const int64_t> list, int64_t lo,
               int64_t hi, const char* what, int32_t out[2]);

/// An activation clamp inside int8 with min <= max.
bool check_activation(KernelContext& ctx, const char* op, int64_t activation_min,
                      int64_t activation_max);

/// Scratch memory for `bytes`: the program's scratch tensor when it is large enough,
/// else the runtime's temp allocator; nullptr (kernel failed, sizes logged) otherwise.
int8_t* scratch_memory(KernelContext& ctx, const char* op, const Tensor* scratch, size_t bytes);

/// Scratch memory for a kernel that runs fastest with some amount and can make do with
/// any amount down to `minimum`: the program's whole scratch tensor whenever it holds at
/// least `minimum` (a program made by ExecuTorch sizes it for CMSIS-NN's needs, which may
/// be less than Kiln's kernels prefer), else `minimum` bytes of the temp allocator. *got
/// says how many bytes the kernel may use; nullptr as scratch_memory.
int8_t* scratch_memory_at_least(KernelContext& ctx, const char* op, const Tensor* scratch, size_t minimum,
                                size_t* got);

}  // namespace cortex_m
}  // namespace kiln

namespace kiln {
namespace cortex_m {

/// True when `t`'s bytes are laid out as if stored in `order` (a permutation of its
/// dims): its dims of more than one element come in the same sequence in both. (Dims of
/// size one do not move bytes: PyTorch gives such tensors any of several dim orders.)
bool stored_in_order(const Tensor& t, const DimOrderType* order);

/// Fails unless `a` and `b` have the same rank and dim order (elementwise kernels walk
/// both buffers in memory order, whatever the layout).
bool check_same_layout(KernelContext& ctx, const char* op, const Tensor& a, const Tensor& b,
                       const char* what_a, const char* what_b);

/// How an elementwise binary kernel pairs its operands: equal element counts, or one
/// operand holding one value per channel of a channels-last 4-D other (the channel is the
/// fastest-varying index in memory), or a single value.
struct Pairing {
  const Tensor* big = nullptr;    // the operand with the output's shape
  const Tensor* small = nullptr;  // the other
  bool swapped = false;           // true when `big` is the second operand
  size_t period = 0;              // small's element i repeats every `period` elements
};

/// Decides the pairing of `a` and `b` (see Pairing); fails with NotSupported otherwise.
bool pair_operands(KernelContext& ctx, const char* op, const Tensor& a, const Tensor& b, Pairing* out);

}  // namespace cortex_m
}  // namespace kiln
