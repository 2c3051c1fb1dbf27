#include "kernels/portable/util/advanced_index.h"

namespace kiln {
namespace portable {

namespace {

/// One index tensor of an indexed self dim, before broadcasting.
struct IndexTensor {
  int32_t rank = 0;
  int64_t sizes[kTensorMaxDim];
  int64_t strides[kTensorMaxDim];
  int32_t self_dim = 0;
};

/// Replaces a Bool/Byte mask over self dims [first, first + mask.dim()) with the
/// coordinates of its nonzero elements: one [count] Long index per dim, in temp memory.
bool expand_mask(KernelContext& ctx, const char* op, const Tensor& self, const Tensor& mask, int32_t first,
                 IndexPlan* p, IndexTensor* entries) {
  const int32_t m = mask.dim();
  if (m == 0 || first + m > self.dim() || p->count + m > kTensorMaxDim) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "mask %s cannot index self %s at dim %d",
                     ShapeString(mask).c_str(), ShapeString(self).c_str(), static_cast<int>(first));
    return false;
  }
  for (int32_t q = 0; q < m; ++q) {
    if (mask.size(q) != self.size(first + q)) {
      KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "mask %s does not match self %s at dim %d",
                       ShapeString(mask).c_str(), ShapeString(self).c_str(), static_cast<int>(first + q));
      return false;
    }
  }
  const uint8_t* bits = mask.const_data_ptr<uint8_t>();  // Bool and Byte: one byte each
  size_t count = 0;
  for (size_t i = 0; i < mask.numel(); ++i) count += bits[i] != 0;
  int64_t* coords = nullptr;
  if (count > 0) {
    coords = static_cast<int64_t*>(ctx.allocate_temp(count * static_cast<size_t>(m) * sizeof(int64_t)));
    if (coords == nullptr) {
      KILN_KERNEL_FAIL(ctx, Error::MemoryAllocationFailed, op, "no temp memory for %zu mask coordinates",
                       count * static_cast<size_t>(m));
      return false;
    }
  }
  int64_t counter[kTensorMaxDim] = {};
  size_t k = 0;
  for (size_t i = 0; i < mask.numel(); ++i) {
    if (bits[i] != 0) {
      for (int32_t q = 0; q < m; ++q) coords[static_cast<size_t>(q) * count + k] = counter[q];
      ++k;
    }
    for (int32_t q = m - 1; q >= 0 && ++counter[q] == mask.size(q); --q) counter[q] = 0;
  }
  for (int32_t q = 0; q < m; ++q) {
    IndexTensor& e = entries[p->count];
    e.rank = 1;
    e.sizes[0] = static_cast<int64_t>(count);
    e.strides[0] = 1;
    e.self_dim = first + q;
    p->data[p->count] = coords != nullptr ? coords + static_cast<size_t>(q) * count : nullptr;
    p->is_long[p->count++] = true;
  }
  return true;
}

}  // namespace

bool make_index_plan(KernelContext& ctx, const char* op, const Tensor& self, Span<Tensor* const> indices,
                     IndexPlan* p) {
  if (indices.size() > static_cast<size_t>(self.dim())) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "%zu indices for self %s", indices.size(),
                     ShapeString(self).c_str());
    return false;
  }
  IndexTensor entries[kTensorMaxDim];
  p->count = 0;
  int32_t dim = 0;  // the self dim the next entry indexes
  for (const Tensor* t : indices) {
    if (t == nullptr) {
      ++dim;
      continue;
    }
    const ScalarType type = t->scalar_type();
    if (type == ScalarType::Bool || type == ScalarType::Byte) {
      if (!expand_mask(ctx, op, self, *t, dim, p, entries)) return false;
      dim += t->dim();
      continue;
    }
    if (type != ScalarType::Long && type != ScalarType::Int) {
      KILN_KERNEL_FAIL(ctx, Error::InvalidType, op, "index tensors must be Long, Int, Bool or Byte, got %s",
                       scalar_type_name(type));
      return false;
    }
    if (dim >= self.dim()) {
      KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "too many indices for self %s", ShapeString(self).c_str());
      return false;
    }
    IndexTensor& e = entries[p->count];
    e.rank = t->dim();
    for (int32_t d = 0; d < e.rank; ++d) {
      e.sizes[d] = t->size(d);
      e.strides[d] = t->strides()[d];
    }
    e.self_dim = dim++;
    p->data[p->count] = t->const_data_ptr();
    p->is_long[p->count++] = type == ScalarType::Long;
  }
  // B: the broadcast shape of every index tensor.
  int32_t b_rank = 0;
  int64_t b_sizes[kTensorMaxDim];
  bool adjacent = true;
  for (int32_t j = 0; j < p->count; ++j) {
    b_rank = entries[j].rank > b_rank ? entries[j].rank : b_rank;
    adjacent = adjacent && (j == 0 || entries[j].self_dim == entries[j - 1].self_dim + 1);
  }
  for (int32_t d = 0; d < b_rank; ++d) b_sizes[d] = 1;
  for (int32_t j = 0; j < p->count; ++j) {
    const IndexTensor& e = entries[j];
    for (int32_t d = 0; d < e.rank; ++d) {
      int64_t& b = b_sizes[b_rank - e.rank + d];
      if (e.sizes[d] != 1 && b != 1 && b != e.sizes[d]) {
        KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "index shapes do not broadcast together");
        return false;
      }
      if (e.sizes[d] != 1) b = e.sizes[d];
    }
    p->indexed_stride[j] = self.strides()[e.self_dim];
    p->indexed_size[j] = self.size(e.self_dim);
  }
  const int32_t first = p->count > 0 ? entries[0].self_dim : 0;
  const int32_t b_at = adjacent ? first : 0;  // where B goes among the result dims
  const int32_t rank = self.dim() - p->count + b_rank;
  if (rank > kTensorMaxDim) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "the result would have %d dims", static_cast<int>(rank));
    return false;
  }
  bool indexed[kTensorMaxDim] = {};
  for (int32_t j = 0; j < p->count; ++j) indexed[entries[j].self_dim] = true;
  p->rank = 0;
  int32_t next_self = 0;
  auto place_self_dim = [&]() {  // the next self dim no index addresses
    while (indexed[next_self]) ++next_self;
    const int32_t d = p->rank++;
    p->sizes[d] = self.size(next_self);
    p->self_strides[d] = self.strides()[next_self++];
    for (int32_t j = 0; j < p->count; ++j) p->index_strides[j][d] = 0;
  };
  for (int32_t i = 0; i < b_at; ++i) place_self_dim();
  for (int32_t t = 0; t < b_rank; ++t) {
    const int32_t d = p->rank++;
    p->sizes[d] = static_cast<SizesType>(b_sizes[t]);
    p->self_strides[d] = 0;
    for (int32_t j = 0; j < p->count; ++j) {
      const IndexTensor& e = entries[j];
      const int32_t own = t - (b_rank - e.rank);
      p->index_strides[j][d] = own >= 0 && e.sizes[own] != 1 ? e.strides[own] : 0;
    }
  }
  while (p->rank < rank) place_self_dim();
  return true;
}

}  // namespace portable
}  // namespace kiln
