// Minimum and maximum with PyTorch's NaN rule (NaN wins: it propagates), for elementwise
// ops (clamp) and the reductions (amax/amin, max/min, argmax/argmin).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/reduce.h"

namespace kiln {
namespace portable {

template <typename T>
inline bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x != x;
  } else {
    return false;
  }
}

/// True when `candidate` replaces `best` as the maximum (kMax) or minimum so far: it is
/// strictly better, or NaN while `best` is not (a NaN best is never replaced, so the
/// first NaN wins).
template <bool kMax, typename T>
inline bool improves(T candidate, T best) {
  if (is_nan(best)) return false;
  if (is_nan(candidate)) return true;
  return kMax ? best < candidate : candidate < best;
}

/// max(a, b) (kMax) or min(a, b); NaN if either is NaN.
template <bool kMax, typename T>
inline T extreme(T a, T b) {
  return improves<kMax>(b, a) ? b : a;
}

/// Reduces `in` over `plan` into `out` (same dtype, any of kAllTypes) with the maximum
/// (kMax) or the minimum. Every output element needs at least one input element.
template <bool kMax>
void reduce_extreme(KernelContext& ctx, const char* name, const Tensor& in, Tensor& out, const ReducePlan& plan) {
  KILN_KERNEL_CHECK(ctx, plan.reduce_count > 0 || out.numel() == 0, Error::InvalidArgument, name,
                    "cannot reduce an empty dimension of %s", ShapeString(in).c_str());
  if (!check_same_dtype(ctx, name, in, out, "self", "out")) return;
  dispatch_dtype<kAllTypes>(ctx, name, in.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const Elements<T> x = elements_of<T>(in);
    T* o = out.mutable_data_ptr<T>();
    for_each_output(plan, [&](size_t oi, size_t base) {
      bool first = true;
      T best = T{};
      for_each_reduced(plan, base, [&](size_t i) {
        if (first || improves<kMax>(x[i], best)) best = x[i];
        first = false;
      });
      o[oi] = best;
    });
  });
}

/// Reduces `in` over `plan` (one reduced dimension, or all) into the position of the
/// maximum (kMax) or minimum within the reduced elements (Long `indices`), and the value
/// itself into `values` unless it is null (same dtype as `in`). Ties give the first
/// position; NaN counts as the extreme, as in PyTorch.
template <bool kMax>
void reduce_arg_extreme(KernelContext& ctx, const char* name, const Tensor& in, Tensor* values, Tensor& indices,
                        const ReducePlan& plan) {
  KILN_KERNEL_CHECK(ctx, plan.reduce_count > 0 || indices.numel() == 0, Error::InvalidArgument, name,
                    "cannot reduce an empty dimension of %s", ShapeString(in).c_str());
  if (!check_dtype(ctx, name, indices, ScalarType::Long, "indices") ||
      (values != nullptr && !check_same_dtype(ctx, name, in, *values, "self", "values"))) {
    return;
  }
  dispatch_dtype<kAllTypes>(ctx, name, in.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const Elements<T> x = elements_of<T>(in);
    int64_t* o = indices.mutable_data_ptr<int64_t>();
    T* v = values != nullptr ? values->mutable_data_ptr<T>() : nullptr;
    for_each_output(plan, [&](size_t oi, size_t base) {
      int64_t k = 0;
      int64_t best_k = 0;
      T best = T{};
      for_each_reduced(plan, base, [&](size_t i) {
        if (k == 0 || improves<kMax>(x[i], best)) {
          best = x[i];
          best_k = k;
        }
        ++k;
      });
      o[oi] = best_k;
      if (v != nullptr) v[oi] = best;
    });
  });
}

/// amax / amin, arguments [self, dim (int[], [] for every dim), keepdim, out, out].
template <bool kMax>
void reduce_extreme_kernel(KernelContext& ctx, const char* name, Span<EValue*> args) {
  ArgReader r(ctx, name, args, 5);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> dims = r.int_list(1);
  const bool keepdim = r.bool_value(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  ReducePlan plan;
  if (!plan_reduction(ctx, name, *in, dims, keepdim, *out, &plan)) return;
  reduce_extreme<kMax>(ctx, name, *in, *out, plan);
}

/// max.unary_out / min.unary_out, arguments [self, out, out]: over every element, 0-dim out.
template <bool kMax>
void reduce_extreme_all_kernel(KernelContext& ctx, const char* name, Span<EValue*> args) {
  ArgReader r(ctx, name, args, 3);
  Tensor* in = r.tensor(0);
  Tensor* out = r.tensor(1);
  if (!r.ok()) return;
  ReducePlan plan;
  if (!plan_reduction(ctx, name, *in, {}, /*keepdim=*/false, *out, &plan)) return;
  reduce_extreme<kMax>(ctx, name, *in, *out, plan);
}

/// argmax / argmin, arguments [self, dim (None: the flattened tensor), keepdim, out, out].
template <bool kMax>
void arg_extreme_kernel(KernelContext& ctx, const char* name, Span<EValue*> args) {
  ArgReader r(ctx, name, args, 5);
  Tensor* in = r.tensor(0);
  bool has_dim = false;
  const int64_t dim = r.optional_int(1, 0, &has_dim);
  const bool keepdim = r.bool_value(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  ReducePlan plan;
  const int64_t dims[1] = {dim};
  if (!make_reduce_plan(ctx, name, *in, {dims, has_dim ? 1u : 0u}, keepdim, &plan)) return;
  // Without dim, PyTorch returns a 0-dim tensor (keepdim keeps every dim as 1).
  const size_t out_rank = has_dim || keepdim ? static_cast<size_t>(plan.out_rank) : 0;
  if (!resize_output(ctx, name, *out, {plan.out_sizes, out_rank})) return;
  reduce_arg_extreme<kMax>(ctx, name, *in, nullptr, *out, plan);
}

/// max.dim_max / min.dim_min, arguments [self, dim, keepdim, values, indices, (values,
/// indices)].
template <bool kMax>
void values_and_indices_kernel(KernelContext& ctx, const char* name, Span<EValue*> args) {
  ArgReader r(ctx, name, args, 6);
  Tensor* in = r.tensor(0);
  const int64_t dim = r.int_value(1);
  const bool keepdim = r.bool_value(2);
  Tensor* values = r.tensor(3);
  Tensor* indices = r.tensor(4);
  if (!r.ok()) return;
  ReducePlan plan;
  const int64_t dims[1] = {dim};
  if (!plan_reduction(ctx, name, *in, {dims, 1u}, keepdim, *values, &plan) ||
      !resize_output_like(ctx, name, *indices, *values)) {
    return;
  }
  reduce_arg_extreme<kMax>(ctx, name, *in, values, *indices, plan);
}

}  // namespace portable
}  // namespace kiln
