// An odometer over strided dimensions: the loop under reductions and strided copies.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/tensor.h"

namespace kiln {
namespace portable {

/// Calls f(offset) for every position of a `rank`-D index space of `sizes`, in row-major
/// order, where offset = sum(index[d] * strides[d]). Nothing is called if a size is 0;
/// rank 0 is one position (offset 0).
template <typename F>
void walk(const int64_t* sizes, const int64_t* strides, int32_t rank, F&& f) {
  if (rank == 0) {
    f(size_t{0});
    return;
  }
  for (int32_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0) return;
  }
  int64_t counter[kTensorMaxDim] = {};
  size_t base = 0;
  const int64_t inner = sizes[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  while (true) {
    for (int64_t i = 0; i < inner; ++i) f(base + static_cast<size_t>(i * inner_stride));
    int32_t d = rank - 2;
    for (; d >= 0; --d) {
      ++counter[d];
      base += static_cast<size_t>(strides[d]);
      if (counter[d] < sizes[d]) break;
      base -= static_cast<size_t>(strides[d] * sizes[d]);
      counter[d] = 0;
    }
    if (d < 0) return;
  }
}

/// Like walk(), with two stride sets: calls f(offset_a, offset_b) for every position.
template <typename F>
void walk2(const int64_t* sizes, const int64_t* strides_a, const int64_t* strides_b, int32_t rank,
           F&& f) {
  for (int32_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0) return;
  }
  int64_t counter[kTensorMaxDim] = {};
  int64_t a = 0;
  int64_t b = 0;
  while (true) {
    f(a, b);
    int32_t d = rank - 1;
    for (; d >= 0; --d) {
      a += strides_a[d];
      b += strides_b[d];
      if (++counter[d] < sizes[d]) break;
      a -= strides_a[d] * sizes[d];
      b -= strides_b[d] * sizes[d];
      counter[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace portable
}  // namespace kiln
