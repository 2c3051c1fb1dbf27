#include "kernels/portable/util/reduce.h"

namespace kiln {
namespace portable {

namespace {

/// Appends a dimension, merging it into the previous one when they are contiguous.
void append_dim(int64_t* sizes, int64_t* strides, int32_t* rank, int64_t size, int64_t stride,
                bool previous_adjacent) {
  if (size == 1) return;  // contributes nothing to the walk (size 0 is kept: it empties it)
  if (*rank > 0 && previous_adjacent && strides[*rank - 1] == size * stride) {
    sizes[*rank - 1] *= size;
    strides[*rank - 1] = stride;
    return;
  }
  sizes[*rank] = size;
  strides[*rank] = stride;
  ++*rank;
}

}  // namespace

bool make_reduce_plan(KernelContext& ctx, const char* op, const Tensor& in, Span<const int64_t> dims,
                      bool keepdim, ReducePlan* plan) {
  bool reduced[kTensorMaxDim] = {};
  const int32_t rank = in.dim();
  if (dims.empty()) {
    for (int32_t d = 0; d < rank; ++d) reduced[d] = true;
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    int32_t d = 0;
    if (!normalize_dim(ctx, op, dims[i], rank, &d)) return false;
    if (rank == 0) continue;  // reducing a 0-dim tensor over dim 0 / -1 is the identity
    if (reduced[d]) {
      KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "dim %d appears twice", static_cast<int>(d));
      return false;
    }
    reduced[d] = true;
  }
  plan->out_rank = 0;
  plan->kept_rank = 0;
  plan->reduced_rank = 0;
  plan->reduce_count = 1;
  int32_t last_kind = -1;  // 0 kept, 1 reduced: only same-kind neighbours merge
  for (int32_t d = 0; d < rank; ++d) {
    const int64_t size = in.size(d);
    const int64_t stride = in.strides()[d];
    if (reduced[d]) {
      plan->reduce_count *= static_cast<size_t>(size);
      if (keepdim) plan->out_sizes[plan->out_rank++] = 1;
      append_dim(plan->reduced_sizes, plan->reduced_strides, &plan->reduced_rank, size, stride,
                 last_kind == 1);
      if (size != 1) last_kind = 1;
    } else {
      plan->out_sizes[plan->out_rank++] = static_cast<SizesType>(size);
      append_dim(plan->kept_sizes, plan->kept_strides, &plan->kept_rank, size, stride, last_kind == 0);
      if (size != 1) last_kind = 0;
    }
  }
  return true;
}

bool plan_reduction(KernelContext& ctx, const char* op, const Tensor& in, Span<const int64_t> dims, bool keepdim,
                    Tensor& out, ReducePlan* plan) {
  return make_reduce_plan(ctx, op, in, dims, keepdim, plan) &&
         resize_output(ctx, op, out, {plan->out_sizes, static_cast<size_t>(plan->out_rank)});
}

bool check_dtype_argument(KernelContext& ctx, const char* op, bool has_dtype, int64_t dtype, const Tensor& out) {
  if (has_dtype && static_cast<int64_t>(out.scalar_type()) != dtype) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidType, op, "dtype %lld differs from out's dtype %s",
                     static_cast<long long>(dtype), scalar_type_name(out.scalar_type()));
    return false;
  }
  return true;
}

}  // namespace portable
}  // namespace kiln
