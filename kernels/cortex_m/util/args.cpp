#include "kernels/cortex_m/util/args.h"

#include "kernels/cortex_m/util/requantize.h"

namespace kiln {
namespace cortex_m {

using portable::ShapeString;

bool stored_in_order(const Tensor& t, const DimOrderType* order) {
  int32_t j = 0;
  for (int32_t i = 0; i < t.dim(); ++i) {
    const DimOrderType d = t.dim_order()[i];
    if (t.size(d) == 1) continue;
    while (j < t.dim() && t.size(order[j]) == 1) ++j;
    if (j == t.dim() || order[j] != d) return false;
    ++j;
  }
  return true;
}

bool activation_geometry(KernelContext& ctx, const char* op, const Tensor& t, Layout layout,
                         const char* what, Nhwc* out) {
  if (t.dim() != 4) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "%s must be 4-D, has sizes %s", what,
                     ShapeString(t).c_str());
    return false;
  }
  static constexpr DimOrderType kContiguous[4] = {0, 1, 2, 3};
  static constexpr DimOrderType kChannelsLast[4] = {0, 2, 3, 1};
  if (layout == Layout::Nhwc) {
    if (!stored_in_order(t, kContiguous)) {
      KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "%s must be a contiguous NHWC tensor", what);
      return false;
    }
    *out = {t.size(0), t.size(1), t.size(2), t.size(3)};
    return true;
  }
  *out = {t.size(0), t.size(2), t.size(3), t.size(1)};
  // With one channel, or one pixel, NCHW and NHWC are the same bytes (stored_in_order).
  if (!stored_in_order(t, kChannelsLast)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op,
                     "%s with sizes %s must be stored channels-last (dim order 0, 2, 3, 1)", what,
                     ShapeString(t).c_str());
    return false;
  }
  return true;
}

bool resize_activation(KernelContext& ctx, const char* op, Tensor& out, Layout layout, const Nhwc& g) {
  const SizesType nchw[4] = {g.n, g.c, g.h, g.w};
  const SizesType nhwc[4] = {g.n, g.h, g.w, g.c};
  return portable::resize_output(ctx, op, out, {layout == Layout::Nhwc ? nhwc : nchw, 4});
}

bool check_int8(KernelContext& ctx, const char* op, const Tensor& t, const char* what) {
  return portable::check_dtype(ctx, op, t, ScalarType::Char, what);
}

bool check_range(KernelContext& ctx, const char* op, int64_t value, int64_t lo, int64_t hi,
                 const char* what) {
  if (value < lo || value > hi) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "%s is %lld, must lie in [%lld, %lld]", what,
                     static_cast<long long>(value), static_cast<long long>(lo), static_cast<long long>(hi));
    return false;
  }
  return true;
}

bool check_requantize_params(KernelContext& ctx, const char* op, int64_t multiplier,
                             int64_t shift, const char* what) {
  if (multiplier < 0 || multiplier > INT32_MAX || !shift_in_range(shift)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op,
                     "%s: multiplier %lld / shift %lld out of range (multiplier in [0, 2^31), shift in [%d, %d])",
                     what, static_cast<long long>(multiplier), static_cast<long long>(shift), static_cast<int>(kMinShift),
                     static_cast<int>(kMaxShift));
    return false;
  }
  return true;
}

bool check_signed_requantize_params(KernelContext& ctx, const char* op, int64_t multiplier, int64_t shift,
                                    const char* what) {
  if (multiplier <= INT32_MIN || multiplier > INT32_MAX || !shift_in_range(shift)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op,
                     "%s: multiplier %lld / shift %lld out of range (multiplier in (-2^31, 2^31), shift in [%d, %d])",
                     what, static_cast<long long>(multiplier), static_cast<long long>(shift), static_cast<int>(kMinShift),
                     static_cast<int>(kMaxShift));
    return false;
  }
  return true;
}

bool check_per_channel_params(KernelContext& ctx, const char* op, const Tensor& multipliers,
                              const Tensor& shifts, int32_t channels) {
  if (!portable::check_dtype(ctx, op, multipliers, ScalarType::Int, "requantize_multipliers") ||
      !portable::check_dtype(ctx, op, shifts, ScalarType::Int, "requantize_shifts")) {
    return false;
  }
  if (multipliers.numel() != static_cast<size_t>(channels) || shifts.numel() != static_cast<size_t>(channels)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op,
                     "%d output channels need as many multipliers and shifts, got %zu and %zu", static_cast<int>(channels),
                     multipliers.numel(), shifts.numel());
    return false;
  }
  const int32_t* m = multipliers.const_data_ptr<int32_t>();
  const int32_t* s = shifts.const_data_ptr<int32_t>();
  for (int32_t c = 0; c < channels; ++c) {
    if (!check_requantize_params(ctx, op, m[c], s[c], "output channel")) {
      KILN_LOG(Error, "%s: (output channel %d of %d)", op, static_cast<int>(c), static_cast<int>(channels));
      return false;
    }
  }
  return true;
}

bool check_bias(KernelContext& ctx, const char* op, const Tensor* bias, int32_t channels,
                const char* what) {
  if (bias == nullptr) return true;
  if (!portable::check_dtype(ctx, op, *bias, ScalarType::Int, what)) return false;
  if (bias->numel() != static_cast<size_t>(channels)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "%s has %zu elements, need %d", what,
                     bias->numel(), static_cast<int>(channels));
    return false;
  }
  return true;
}

bool read_pair(KernelContext& ctx, const char* op, Span<const int64_t> list, int64_t lo,
               int64_t hi, const char* what, int32_t out[2]) {
  if (list.size() != 1 && list.size() != 2) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "%s needs 1 or 2 values, has %zu", what, list.size());
    return false;
  }
  for (size_t i = 0; i < 2; ++i) {
    const int64_t v = list[list.size() == 1 ? 0 : i];
    if (!check_range(ctx, op, v, lo, hi, what)) return false;
    out[i] = static_cast<int32_t>(v);
  }
  return true;
}

bool check_activation(KernelContext& ctx, const char* op, int64_t activation_min,
                      int64_t activation_max) {
  if (activation_min < -128 || activation_max > 127 || activation_min > activation_max) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op,
                     "activation range [%lld, %lld] is not an int8 range with min <= max",
                     static_cast<long long>(activation_min), static_cast<long long>(activation_max));
    return false;
  }
  return true;
}

int8_t* scratch_memory(KernelContext& ctx, const char* op, const Tensor* scratch, size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (scratch != nullptr && scratch->nbytes() >= bytes && scratch->mutable_data_ptr() != nullptr) {
    return scratch->mutable_data_ptr<int8_t>();
  }
  void* memory = ctx.allocate_temp(bytes, 16);
  if (memory == nullptr) {
    KILN_KERNEL_FAIL(ctx, Error::MemoryAllocationFailed, op,
                     "scratch buffer too small: needs %zu bytes, the program's scratch tensor has %zu "
                     "and the temp allocator cannot provide them",
                     bytes, scratch != nullptr ? scratch->nbytes() : size_t{0});
    return nullptr;
  }
  return static_cast<int8_t*>(memory);
}

int8_t* scratch_memory_at_least(KernelContext& ctx, const char* op, const Tensor* scratch, size_t minimum,
                                size_t* got) {
  if (scratch != nullptr && scratch->mutable_data_ptr() != nullptr && scratch->nbytes() >= minimum &&
      scratch->nbytes() > 0) {
    *got = scratch->nbytes();
    return scratch->mutable_data_ptr<int8_t>();
  }
  // The tensor cannot hold even the minimum: the temp allocator, for the minimum.
  *got = minimum;
  return scratch_memory(ctx, op, scratch, minimum);
}

}  // namespace cortex_m
}  // namespace kiln

namespace kiln {
namespace cortex_m {

bool check_same_layout(KernelContext& ctx, const char* op, const Tensor& a, const Tensor& b,
                       const char* what_a, const char* what_b) {
  bool same = a.dim() == b.dim();
  for (int32_t i = 0; same && i < a.dim(); ++i) same = a.dim_order()[i] == b.dim_order()[i];
  if (!same) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "%s and %s must have the same rank and dim order", what_a,
                     what_b);
    return false;
  }
  return true;
}

bool pair_operands(KernelContext& ctx, const char* op, const Tensor& a, const Tensor& b, Pairing* out) {
  out->swapped = b.numel() > a.numel();
  out->big = out->swapped ? &b : &a;
  out->small = out->swapped ? &a : &b;
  const Tensor& big = *out->big;
  const size_t n = out->small->numel();
  if (n == big.numel() || n == 1) {
    out->period = n;
    return true;
  }
  static constexpr int32_t kChannelsLast[4] = {0, 2, 3, 1};
  bool channels_last = big.dim() == 4;
  for (int32_t i = 0; channels_last && i < 4; ++i) channels_last = big.dim_order()[i] == kChannelsLast[i];
  const bool rows = big.dim() >= 1 && big.dim_order()[big.dim() - 1] == big.dim() - 1;
  // Channels-last 4-D: per-channel values; any layout with the last dim innermost: per
  // last-dim values (a [.., C] tensor against [C]).
  const size_t inner = channels_last ? static_cast<size_t>(big.size(1))
                                     : (rows ? static_cast<size_t>(big.size(big.dim() - 1)) : 0);
  if (inner != 0 && n == inner) {
    out->period = n;
    return true;
  }
  KILN_KERNEL_FAIL(ctx, Error::NotSupported, op,
                   "operands %s and %s: only equal sizes, a single value or one value per channel broadcast",
                   portable::ShapeString(a).c_str(), portable::ShapeString(b).c_str());
  return false;
}

}  // namespace cortex_m
}  // namespace kiln
