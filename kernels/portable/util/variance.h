// Variance (and mean) over a reduction plan, for var and var_mean.
//
// Two passes in double per output element: the mean, then the sum of squared
// deviations, divided by max(0, N - correction) as in PyTorch (so N <= correction gives
// inf, or NaN when every deviation is 0; an empty reduction gives NaN).
#pragma once

#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/reduce.h"

namespace kiln {
namespace portable {

/// Writes the variance of `in` over `dims` (None or [] for all) into `var`, and the
/// mean into `mean` unless it is null. Floating point, every tensor of one dtype.
inline void variance_into(KernelContext& ctx, const char* name, const Tensor& in, Span<const int64_t> dims,
                          double correction, bool keepdim, Tensor& var, Tensor* mean) {
  if (!check_same_dtype(ctx, name, in, var, "self", "out") ||
      (mean != nullptr && !check_same_dtype(ctx, name, in, *mean, "self", "mean"))) {
    return;
  }
  ReducePlan plan;
  if (!plan_reduction(ctx, name, in, dims, keepdim, var, &plan) ||
      (mean != nullptr && !resize_output_like(ctx, name, *mean, var))) {
    return;
  }
  const double count = static_cast<double>(plan.reduce_count);
  const double divisor = count > correction ? count - correction : 0.0;
  dispatch_dtype<kFloatTypes>(ctx, name, in.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.const_data_ptr<T>();
    T* v = var.mutable_data_ptr<T>();
    T* m = mean != nullptr ? mean->mutable_data_ptr<T>() : nullptr;
    for_each_output(plan, [&](size_t oi, size_t base) {
      double sum = 0;
      for_each_reduced(plan, base, [&](size_t i) { sum += static_cast<double>(x[i]); });
      const double average = sum / count;
      double squares = 0;
      for_each_reduced(plan, base, [&](size_t i) {
        const double d = static_cast<double>(x[i]) - average;
        squares += d * d;
      });
      v[oi] = static_cast<T>(squares / divisor);
      if (m != nullptr) m[oi] = static_cast<T>(average);
    });
  });
}

}  // namespace portable
}  // namespace kiln
