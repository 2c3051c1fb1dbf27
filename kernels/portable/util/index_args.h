// Reading index tensors (gather, scatter, index_select, embedding, topk's indices).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

/// Fails unless `index` is Long (or, with `allow_int`, Int).
inline bool check_index_dtype(KernelContext& ctx, const char* op, const Tensor& index, bool allow_int,
                              const char* what = "index") {
  const ScalarType t = index.scalar_type();
  if (t == ScalarType::Long || (allow_int && t == ScalarType::Int)) return true;
  KILN_KERNEL_FAIL(ctx, Error::InvalidType, op, "%s has dtype %s, expected Long%s", what, scalar_type_name(t),
                   allow_int ? " or Int" : "");
  return false;
}

/// Element i of a Long or Int index tensor.
inline int64_t index_at(const Tensor& index, size_t i) {
  return index.scalar_type() == ScalarType::Long ? index.const_data_ptr<int64_t>()[i]
                                                 : index.const_data_ptr<int32_t>()[i];
}

/// `v` as a position in [0, size); negative values count from the end when
/// `allow_negative`. Fails the kernel (logged) when out of range.
inline bool checked_index(KernelContext& ctx, const char* op, int64_t v, int64_t size, bool allow_negative,
                          int64_t* position) {
  if (allow_negative && v < 0 && v >= -size) v += size;
  if (v < 0 || v >= size) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "index %lld is out of range for size %lld",
                     static_cast<long long>(v), static_cast<long long>(size));
    return false;
  }
  *position = v;
  return true;
}

}  // namespace portable
}  // namespace kiln
