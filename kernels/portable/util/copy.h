// Copies between strided layouts, for the view/permute/expand/slice/pad/cat kernels.
//
// Copy kernels move elements without looking at their values, so they dispatch on the
// element size only (1, 2, 4 or 8 bytes): every dtype, one instantiation per size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/portable/util/walk.h"
#include "runtime/core/scalar_type.h"

namespace kiln {
namespace portable {

/// For every index of `sizes` (rank dims): dst[index . dst_strides] = src[index . src_strides].
/// Strides are in elements and may be 0 in src (broadcast). Innermost runs where both
/// strides are 1 are copied with memcpy.
void strided_copy(const void* src, const int64_t* src_strides, void* dst, const int64_t* dst_strides,
                  const int64_t* sizes, int32_t rank, size_t element_size);

/// Like strided_copy, converting each element from `src_type` to `dst_type` (both in
/// kAllTypes; returns false otherwise).
bool strided_cast_copy(const void* src, ScalarType src_type, const int64_t* src_strides, void* dst,
                       ScalarType dst_type, const int64_t* dst_strides, const int64_t* sizes,
                       int32_t rank);

/// Contiguous strides (in elements) of `sizes`.
void contiguous_strides(const int64_t* sizes, int32_t rank, int64_t* strides);

/// True when the bytes of `a` and `b` overlap (empty tensors overlap nothing).
inline bool memory_overlaps(const Tensor& a, const Tensor& b) {
  if (a.nbytes() == 0 || b.nbytes() == 0) return false;
  const uint8_t* pa = a.const_data_ptr<uint8_t>();
  const uint8_t* pb = b.const_data_ptr<uint8_t>();
  return pa < pb + b.nbytes() && pb < pa + a.nbytes();
}

/// Copies `in` into `out` (same dtype, out already resized, contiguous) when they hold
/// the same number of elements; no-op if they share memory.
void copy_all(const Tensor& in, Tensor& out);

/// Copies `in` into `out` (same shape, out resized already) converting the dtype and
/// the dim order as needed. False for a dtype outside kAllTypes. Must not overlap
/// unless both have the same dtype and dim order.
bool convert_copy(const Tensor& in, Tensor& out);

}  // namespace portable
}  // namespace kiln
