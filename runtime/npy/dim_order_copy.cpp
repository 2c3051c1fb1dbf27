#include "runtime/npy/dim_order_copy.h"

#include <cstring>

#include "runtime/platform/log.h"

namespace kiln {

bool is_default_dim_order(Span<const DimOrderType> dim_order) {
  for (size_t i = 0; i < dim_order.size(); ++i) {
    if (dim_order[i] != i) return false;
  }
  return true;
}

namespace {

// Calls visit(row_major_index, stored_index) for every element; false if `dim_order` is
// not a permutation of the dims.
template <typename Visit>
bool walk_dim_order(Span<const SizesType> sizes, Span<const DimOrderType> dim_order, Visit visit) {
  const size_t rank = sizes.size();
  bool seen[kTensorMaxDim] = {};
  bool ok = rank <= static_cast<size_t>(kTensorMaxDim) && dim_order.size() == rank;
  for (size_t i = 0; ok && i < rank; ++i) {
    ok = dim_order[i] < rank && !seen[dim_order[i]];
    if (ok) seen[dim_order[i]] = true;
  }
  if (!ok) {
    KILN_LOG(Error, "dim order of %zu entries is not a permutation of the %zu dims", dim_order.size(), rank);
    return false;
  }
  // Stride (in elements) of each logical dim in the dim-ordered storage.
  size_t stored_stride[kTensorMaxDim];
  size_t stride = 1;
  size_t numel = 1;
  for (size_t i = rank; i-- > 0;) {
    stored_stride[dim_order[i]] = stride;
    stride *= static_cast<size_t>(sizes[dim_order[i]]);
  }
  for (size_t d = 0; d < rank; ++d) numel *= static_cast<size_t>(sizes[d]);
  size_t index[kTensorMaxDim] = {};
  size_t stored = 0;
  for (size_t i = 0; i < numel; ++i) {
    // i walks the row-major array; `stored` is the same element's dim-ordered offset.
    visit(i, stored);
    for (size_t d = rank; d-- > 0;) {
      stored += stored_stride[d];
      if (++index[d] < static_cast<size_t>(sizes[d])) break;
      stored -= stored_stride[d] * static_cast<size_t>(sizes[d]);
      index[d] = 0;
    }
  }
  return true;
}

}  // namespace

Error copy_dim_order(const void* src, void* dst, Span<const SizesType> sizes,
                     Span<const DimOrderType> dim_order, size_t element_size, bool to_dim_order) {
  const uint8_t* from = static_cast<const uint8_t*>(src);
  uint8_t* to = static_cast<uint8_t*>(dst);
  const bool ok = walk_dim_order(sizes, dim_order, [&](size_t row_major, size_t stored) {
    if (to_dim_order) {
      std::memcpy(to + stored * element_size, from + row_major * element_size, element_size);
    } else {
      std::memcpy(to + row_major * element_size, from + stored * element_size, element_size);
    }
  });
  return ok ? Error::Ok : Error::InvalidArgument;
}

size_t count_differences_dim_order(const void* stored, const void* row_major, Span<const SizesType> sizes,
                                   Span<const DimOrderType> dim_order, size_t element_size, size_t* first) {
  const uint8_t* a = static_cast<const uint8_t*>(stored);
  const uint8_t* b = static_cast<const uint8_t*>(row_major);
  size_t differing = 0;
  walk_dim_order(sizes, dim_order, [&](size_t i, size_t s) {
    if (std::memcmp(a + s * element_size, b + i * element_size, element_size) != 0) {
      if (differing++ == 0) *first = i;
    }
  });
  return differing;
}

}  // namespace kiln
