// PyTorch's advanced indexing (self[indices] with a list of index tensors), shared by
// index.Tensor_out (gather through it) and index_put (scatter through it).
//
// indices[i] indexes self's dim i (a None entry keeps the whole dim, missing trailing
// entries too). Long/Int index tensors broadcast together to one shape B; a Bool/Byte
// mask over m dims stands for its nonzero coordinates (m index tensors of shape
// [count], kept in temp memory). The result has B where the indexed dims were when
// those are adjacent, else B first, followed by the other dims in order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

struct IndexPlan {
  /// The result's shape.
  int32_t rank = 0;
  SizesType sizes[kTensorMaxDim];
  /// Per result dimension: its stride in self (0 for the dims of B).
  int64_t self_strides[kTensorMaxDim];
  /// The indexed self dims: stride and size in self, index data (Long or Int) and its
  /// strides per result dimension (0 outside B and where the index is broadcast).
  int32_t count = 0;
  int64_t indexed_stride[kTensorMaxDim];
  int64_t indexed_size[kTensorMaxDim];
  const void* data[kTensorMaxDim];
  bool is_long[kTensorMaxDim];
  int64_t index_strides[kTensorMaxDim][kTensorMaxDim];
};

/// Builds the plan of self[indices]; fails the kernel (logged) on a bad index list.
bool make_index_plan(KernelContext& ctx, const char* op, const Tensor& self, Span<Tensor* const> indices,
                     IndexPlan* plan);

/// Calls f(result_offset, self_offset, other_offset) for every element of the result,
/// in order, where other_offset follows `other_strides` (one per result dim, e.g. a
/// tensor broadcast to the result; null: always 0). Negative indices count from the
/// end; an index out of range fails the kernel (returns false, logged) before f sees it.
template <typename F>
bool for_each_indexed(KernelContext& ctx, const char* op, const IndexPlan& p, const int64_t* other_strides, F&& f) {
  size_t numel = 1;
  for (int32_t d = 0; d < p.rank; ++d) numel *= static_cast<size_t>(p.sizes[d]);
  if (numel == 0) return true;
  int64_t counter[kTensorMaxDim] = {};
  int64_t base = 0;
  int64_t other = 0;
  int64_t index_offset[kTensorMaxDim] = {};
  for (size_t e = 0; e < numel; ++e) {
    int64_t offset = base;
    for (int32_t j = 0; j < p.count; ++j) {
      const size_t at = static_cast<size_t>(index_offset[j]);
      int64_t v = p.is_long[j] ? static_cast<const int64_t*>(p.data[j])[at] : static_cast<const int32_t*>(p.data[j])[at];
      const int64_t size = p.indexed_size[j];
      if (v < -size || v >= size) {
        KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "index %lld is out of range for size %lld",
                         static_cast<long long>(v), static_cast<long long>(size));
        return false;
      }
      if (v < 0) v += size;
      offset += v * p.indexed_stride[j];
    }
    f(e, static_cast<size_t>(offset), static_cast<size_t>(other));
    for (int32_t d = p.rank - 1; d >= 0; --d) {
      base += p.self_strides[d];
      if (other_strides != nullptr) other += other_strides[d];
      for (int32_t j = 0; j < p.count; ++j) index_offset[j] += p.index_strides[j][d];
      if (++counter[d] < p.sizes[d]) break;
      base -= p.self_strides[d] * p.sizes[d];
      if (other_strides != nullptr) other -= other_strides[d] * p.sizes[d];
      for (int32_t j = 0; j < p.count; ++j) index_offset[j] -= p.index_strides[j][d] * p.sizes[d];
      counter[d] = 0;
    }
  }
  return true;
}

}  // namespace portable
}  // namespace kiln
