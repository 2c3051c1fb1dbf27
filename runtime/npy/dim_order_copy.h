// Copies between a row-major (.npy) array and a tensor stored in another dim order.
//
// A program's inputs and outputs may be stored in a non-default dim order (ExecuTorch's
// Cortex-M programs keep 4-D activations channels-last: dim order 0, 2, 3, 1), while
// .npy files hold the logical sizes row-major. Runners convert at the boundary.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace kiln {

/// True when `dim_order` is 0, 1, ..., n-1 (row-major).
bool is_default_dim_order(Span<const DimOrderType> dim_order);

/// Writes the row-major array `src` of logical `sizes` into `dst` stored in `dim_order`
/// (to_dim_order) or the reverse (!to_dim_order). `dim_order` must be a permutation of
/// 0..n-1 with n = sizes.size() <= kTensorMaxDim; the buffers must not overlap.
/// InvalidArgument (logged) otherwise.
Error copy_dim_order(const void* src, void* dst, Span<const SizesType> sizes,
                     Span<const DimOrderType> dim_order, size_t element_size, bool to_dim_order);

/// Compares `stored` (a tensor in `dim_order`) with the row-major array `row_major`
/// element by element: returns how many elements differ and, in `first`, the row-major
/// index of the first. Same preconditions as copy_dim_order (0 differing if they fail).
size_t count_differences_dim_order(const void* stored, const void* row_major, Span<const SizesType> sizes,
                                   Span<const DimOrderType> dim_order, size_t element_size, size_t* first);

}  // namespace kiln
