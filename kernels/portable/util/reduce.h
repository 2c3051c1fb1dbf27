// Reductions over a set of dimensions (mean, sum, amax, argmax).
//
// A ReducePlan splits the input's dimensions into kept ones (which index the output)
// and reduced ones (walked for each output element). Adjacent dimensions that are
// contiguous with each other are merged so that the common cases (reduce H and W of
// NCHW, reduce the last dim) become one flat inner loop.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/walk.h"

namespace kiln {
namespace portable {

struct ReducePlan {
  /// Output shape (reduced dims dropped, or kept as 1 with keepdim).
  SizesType out_sizes[kTensorMaxDim];
  int32_t out_rank = 0;
  /// Merged kept / reduced dimensions, outermost first, strides in elements.
  int64_t kept_sizes[kTensorMaxDim], kept_strides[kTensorMaxDim];
  int32_t kept_rank = 0;
  int64_t reduced_sizes[kTensorMaxDim], reduced_strides[kTensorMaxDim];
  int32_t reduced_rank = 0;
  /// Elements combined into each output element.
  size_t reduce_count = 1;
};

/// Builds the plan for reducing `dims` of `in` (empty `dims` reduces every dimension).
/// Fails the kernel on an out-of-range or repeated dimension.
bool make_reduce_plan(KernelContext& ctx, const char* op, const Tensor& in, Span<const int64_t> dims,
                      bool keepdim, ReducePlan* plan);

/// make_reduce_plan, then resizes `out` to the plan's output shape.
bool plan_reduction(KernelContext& ctx, const char* op, const Tensor& in, Span<const int64_t> dims, bool keepdim,
                    Tensor& out, ReducePlan* plan);

/// Fails unless an optional ScalarType argument (present when `has_dtype`) is out's dtype.
bool check_dtype_argument(KernelContext& ctx, const char* op, bool has_dtype, int64_t dtype, const Tensor& out);

/// Calls f(out_index, base_offset) for every output element, in output order.
template <typename F>
void for_each_output(const ReducePlan& plan, F&& f) {
  size_t out_index = 0;
  walk(plan.kept_sizes, plan.kept_strides, plan.kept_rank, [&](size_t base) { f(out_index++, base); });
}

/// Calls f(offset) for every input element reduced into the output element at `base`.
template <typename F>
void for_each_reduced(const ReducePlan& plan, size_t base, F&& f) {
  walk(plan.reduced_sizes, plan.reduced_strides, plan.reduced_rank,
       [&](size_t offset) { f(base + offset); });
}

}  // namespace portable
}  // namespace kiln
