// Tensor: a non-owning view of typed, shaped memory.
//
// The method builds its tensors at init time in the method allocator; the sizes,
// dim order and strides arrays live there too. Kernels read inputs and write outputs
// through this class; they never allocate tensors.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"

namespace kiln {

using SizesType = int32_t;
using DimOrderType = uint8_t;
using StridesType = int32_t;

/// Upper bound on tensor rank, so kernels can keep index arrays on the stack.
constexpr int32_t kTensorMaxDim = 16;

/// How the shape of a tensor may change at execution time.
enum class ShapeDynamism : uint8_t {
  /// Sizes never change.
  Static = 0,
  /// Sizes may shrink below the planned (upper-bound) sizes.
  DynamicBound = 1,
  /// No bound; not supported (the runtime never allocates on the execution path).
  DynamicUnbound = 2,
};

class Tensor final {
 public:
  /// `sizes`, `dim_order` and `strides` hold `dim` entries each and must outlive the
  /// tensor; `strides` is filled from sizes and dim order here.
  Tensor(ScalarType type, int32_t dim, SizesType* sizes, DimOrderType* dim_order,
         StridesType* strides, void* data, ShapeDynamism dynamism = ShapeDynamism::Static);

  ScalarType scalar_type() const { return type_; }
  int32_t dim() const { return dim_; }
  Span<const SizesType> sizes() const { return {sizes_, static_cast<size_t>(dim_)}; }
  Span<const DimOrderType> dim_order() const { return {dim_order_, static_cast<size_t>(dim_)}; }
  Span<const StridesType> strides() const { return {strides_, static_cast<size_t>(dim_)}; }
  /// Size of dimension `d`; negative `d` counts from the end. `d` must be valid.
  SizesType size(int32_t d) const { return sizes_[d < 0 ? d + dim_ : d]; }
  /// Number of elements (1 for a 0-dim tensor).
  size_t numel() const { return numel_; }
  size_t element_size() const { return kiln::element_size(type_); }
  size_t nbytes() const { return numel_ * element_size(); }
  /// Elements the tensor's memory holds: its planned (upper-bound) sizes' count. A
  /// dynamic-bound tensor is never resized beyond it.
  size_t capacity_numel() const { return capacity_numel_; }
  size_t capacity_nbytes() const { return capacity_numel_ * element_size(); }
  /// True when the dim order is 0, 1, ..., dim-1 (row-major, the default).
  bool is_contiguous() const;
  ShapeDynamism shape_dynamism() const { return dynamism_; }

  const void* const_data_ptr() const { return data_; }
  void* mutable_data_ptr() const { return data_; }
  template <typename T>
  const T* const_data_ptr() const { return static_cast<const T*>(data_); }
  template <typename T>
  T* mutable_data_ptr() const { return static_cast<T*>(data_); }
  void set_data(void* data) { data_ = data; }

  /// Changes the sizes. A static tensor accepts only its current sizes; a
  /// dynamic-bound tensor accepts any sizes with at most its planned element count.
  /// Returns InvalidArgument (with a log line) otherwise.
  Error resize(Span<const SizesType> new_sizes);

 private:
  void compute_strides_and_numel();

  void* data_;
  SizesType* sizes_;
  DimOrderType* dim_order_;
  StridesType* strides_;
  size_t numel_ = 1;
  size_t capacity_numel_ = 1;
  int32_t dim_;
  ScalarType type_;
  ShapeDynamism dynamism_;
};

/// True when both tensors have the same rank and sizes.
bool same_shape(const Tensor& a, const Tensor& b);

/// Ok if a tensor of `sizes` can have int32 strides and element count: every size is
/// >= 0 and the product of the sizes, each 0 counted as 1, is at most INT32_MAX. A
/// zero-sized dimension makes the element count 0 but not the strides of the other
/// dimensions, so [0, 65536, 65536] is refused too. InvalidArgument otherwise, with a
/// log line naming the dimension.
Error check_tensor_sizes(Span<const SizesType> sizes);

}  // namespace kiln
