#include "runtime/core/tensor.h"

#include "runtime/core/result.h"
#include "runtime/platform/log.h"

namespace kiln {

Tensor::Tensor(ScalarType type, int32_t dim, SizesType* sizes, DimOrderType* dim_order,
               StridesType* strides, void* data, ShapeDynamism dynamism)
    : data_(data),
      sizes_(sizes),
      dim_order_(dim_order),
      strides_(strides),
      dim_(dim),
      type_(type),
      dynamism_(dynamism) {
  compute_strides_and_numel();
  capacity_numel_ = numel_;
}

void Tensor::compute_strides_and_numel() {
  // Strides follow the dim order: the innermost dimension (last in dim_order) has stride 1.
  // Unsigned, so that sizes check_tensor_sizes() refuses (the loaders and resize()
  // never let them through) wrap instead of being undefined behaviour.
  size_t numel = 1;
  uint32_t running = 1;
  for (int32_t i = dim_ - 1; i >= 0; --i) {
    const DimOrderType d = dim_order_[i];
    strides_[d] = static_cast<StridesType>(running);
    running *= static_cast<uint32_t>(sizes_[d]);
  }
  for (int32_t i = 0; i < dim_; ++i) {
    numel *= static_cast<size_t>(sizes_[i]);
  }
  numel_ = numel;
}

bool Tensor::is_contiguous() const {
  for (int32_t i = 0; i < dim_; ++i) {
    if (dim_order_[i] != i) return false;
  }
  return true;
}

Error Tensor::resize(Span<const SizesType> new_sizes) {
  if (static_cast<int32_t>(new_sizes.size()) != dim_) {
    KILN_LOG(Error, "resize: rank %zu requested for a tensor of rank %d", new_sizes.size(),
             static_cast<int>(dim_));
    return Error::InvalidArgument;
  }
  KILN_TRY(check_tensor_sizes(new_sizes));
  bool same = true;
  size_t numel = 1;
  for (int32_t i = 0; i < dim_; ++i) {
    same = same && new_sizes[i] == sizes_[i];
    numel *= static_cast<size_t>(new_sizes[i]);
  }
  if (same) return Error::Ok;
  if (dynamism_ == ShapeDynamism::Static || numel > capacity_numel_) {
    KILN_LOG(Error, "resize: tensor is %s with %zu planned elements; %zu requested",
             dynamism_ == ShapeDynamism::Static ? "static" : "bounded", capacity_numel_, numel);
    return Error::InvalidArgument;
  }
  for (int32_t i = 0; i < dim_; ++i) sizes_[i] = new_sizes[i];
  compute_strides_and_numel();
  return Error::Ok;
}

Error check_tensor_sizes(Span<const SizesType> sizes) {
  uint64_t product = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0) {
      KILN_LOG(Error, "dimension %zu has negative size %d", d, static_cast<int>(sizes[d]));
      return Error::InvalidArgument;
    }
    product *= sizes[d] == 0 ? 1u : static_cast<uint64_t>(sizes[d]);
    if (product > static_cast<uint64_t>(INT32_MAX)) {
      KILN_LOG(Error, "sizes up to dimension %zu multiply to more than int32 (strides are int32; "
               "zero-sized dimensions count as 1)", d);
      return Error::InvalidArgument;
    }
  }
  return Error::Ok;
}

bool same_shape(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) return false;
  for (int32_t i = 0; i < a.dim(); ++i) {
    if (a.size(i) != b.size(i)) return false;
  }
  return true;
}

}  // namespace kiln
