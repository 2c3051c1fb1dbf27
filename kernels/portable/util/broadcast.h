// Broadcasting (numpy rules) for elementwise kernels.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace kiln {
namespace portable {

/// The broadcast shape of `a` and `b` into `out` (kTensorMaxDim entries) and its rank
/// into `out_dim`. False when a pair of sizes is neither equal nor 1.
bool broadcast_shapes(Span<const SizesType> a, Span<const SizesType> b, SizesType* out,
                      int32_t* out_dim);

/// True when `in` broadcasts to `out_sizes` (each aligned size equal or 1).
bool broadcasts_to(Span<const SizesType> in, Span<const SizesType> out_sizes);

/// Calls f(out_index, in_index) for every element of a contiguous output of
/// `out_sizes`, where in_index[k] is the matching element of inputs[k] (contiguous,
/// broadcastable to out_sizes). Output indices are visited in order.
template <size_t N, typename F>
void for_each_broadcast(Span<const SizesType> out_sizes, const Tensor* const (&inputs)[N], F&& f) {
  const int32_t rank = static_cast<int32_t>(out_sizes.size());
  size_t numel = 1;
  for (int32_t d = 0; d < rank; ++d) numel *= static_cast<size_t>(out_sizes[d]);
  size_t index[N] = {};
  if (numel == 0) return;
  if (rank == 0) {
    f(size_t{0}, index);
    return;
  }
  // Per input, the stride of each output dimension: 0 where the input is broadcast.
  ptrdiff_t strides[N][kTensorMaxDim];
  for (size_t k = 0; k < N; ++k) {
    const int32_t shift = rank - inputs[k]->dim();
    for (int32_t d = 0; d < rank; ++d) {
      const int32_t id = d - shift;
      strides[k][d] = (id < 0 || inputs[k]->size(id) == 1) ? 0 : inputs[k]->strides()[id];
    }
  }
  size_t counter[kTensorMaxDim] = {};
  size_t base[N] = {};
  const size_t inner = static_cast<size_t>(out_sizes[rank - 1]);
  for (size_t o = 0; o < numel; o += inner) {
    for (size_t j = 0; j < inner; ++j) {
      for (size_t k = 0; k < N; ++k) index[k] = base[k] + j * strides[k][rank - 1];
      f(o + j, index);
    }
    // Advance the outer dimensions like an odometer.
    for (int32_t d = rank - 2; d >= 0; --d) {
      ++counter[d];
      for (size_t k = 0; k < N; ++k) base[k] += strides[k][d];
      if (counter[d] < static_cast<size_t>(out_sizes[d])) break;
      for (size_t k = 0; k < N; ++k) base[k] -= strides[k][d] * out_sizes[d];
      counter[d] = 0;
    }
  }
}

}  // namespace portable
}  // namespace kiln
