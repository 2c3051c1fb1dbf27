// Internal: checks on the program's value descriptions shared by MethodMeta and Method.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/evalue.h"
#include "runtime/core/result.h"
#include "runtime/core/tensor.h"

namespace kiln_pte {
struct Operator;
struct Tensor;
enum class KernelTypes : uint8_t;
}  // namespace kiln_pte

namespace kiln {
namespace internal {

/// A tensor description that passed check_tensor_shape.
struct TensorShape {
  ScalarType scalar_type;
  Span<const int32_t> sizes;
  /// The program's dim order, or 0..dim-1 when the program leaves it out.
  Span<const uint8_t> dim_order;
  ShapeDynamism dynamism;
  size_t numel;
  size_t nbytes;
};

/// Validates dtype, rank (<= kTensorMaxDim), dim order (a permutation), sizes (>= 0,
/// element count and byte size without overflow, strides within int32), storage offset
/// (0) and dynamism (not unbound). InvalidProgram or NotSupported, logged with
/// `value_index`.
Result<TensorShape> check_tensor_shape(const kiln_pte::Tensor& tensor, size_t value_index);

/// The runtime tag for a program value type (None for an unknown type).
Tag tag_of(kiln_pte::KernelTypes type);

/// Writes "name.overload" (or "name" without an overload) and a NUL into `buf` when
/// it fits in `size` bytes; returns the bytes needed, NUL included.
size_t write_operator_name(const kiln_pte::Operator& op, char* buf, size_t size);

}  // namespace internal
}  // namespace kiln
