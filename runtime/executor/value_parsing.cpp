#include "runtime/executor/value_parsing.h"

#include <cinttypes>
#include <cstring>

#include "kiln_schema/program_generated.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace internal {
namespace {

constexpr uint8_t kDefaultDimOrder[kTensorMaxDim] = {0, 1, 2,  3,  4,  5,  6,  7,
                                                     8, 9, 10, 11, 12, 13, 14, 15};

}  // namespace

Result<TensorShape> check_tensor_shape(const kiln_pte::Tensor& tensor, size_t value_index) {
  TensorShape shape;
  shape.scalar_type = static_cast<ScalarType>(tensor.scalar_type());
  if (!is_valid_scalar_type(shape.scalar_type)) {
    KILN_LOG(Error, "value %zu: tensor has unknown scalar type %d", value_index,
             static_cast<int>(tensor.scalar_type()));
    return Error::InvalidProgram;
  }
  const auto* sizes = tensor.sizes();
  const size_t dim = sizes != nullptr ? sizes->size() : 0;
  if (dim > static_cast<size_t>(kTensorMaxDim)) {
    KILN_LOG(Error, "value %zu: tensor has %zu dimensions; at most %d are supported", value_index,
             dim, static_cast<int>(kTensorMaxDim));
    return Error::InvalidProgram;
  }
  shape.sizes = {sizes != nullptr ? sizes->data() : nullptr, dim};
  const auto* dim_order = tensor.dim_order();
  if (dim_order == nullptr || dim_order->size() == 0) {
    shape.dim_order = {kDefaultDimOrder, dim};
  } else if (dim_order->size() != dim) {
    KILN_LOG(Error, "value %zu: dim order has %" PRIu32 " entries for a %zu-dim tensor", value_index,
             dim_order->size(), dim);
    return Error::InvalidProgram;
  } else {
    shape.dim_order = {dim_order->data(), dim};
  }
  bool seen[kTensorMaxDim] = {};
  for (size_t i = 0; i < dim; ++i) {
    const uint8_t d = shape.dim_order[i];
    if (d >= dim || seen[d]) {
      KILN_LOG(Error, "value %zu: dim order is not a permutation of 0..%zu (entry %zu is %u)",
               value_index, dim - 1, i, static_cast<unsigned>(d));
      return Error::InvalidProgram;
    }
    seen[d] = true;
  }
  // Strides are int32 running products of the sizes: their product (a zero-sized
  // dimension counted as 1, since it does not stop the strides of the others) must fit.
  if (check_tensor_sizes(shape.sizes) != Error::Ok) {
    KILN_LOG(Error, "value %zu: tensor sizes need strides beyond int32", value_index);
    return Error::InvalidProgram;
  }
  size_t numel = 1;
  for (size_t i = 0; i < dim; ++i) numel *= static_cast<size_t>(shape.sizes[i]);
  shape.numel = numel;
  if (__builtin_mul_overflow(numel, element_size(shape.scalar_type), &shape.nbytes)) {
    KILN_LOG(Error, "value %zu: tensor byte size overflows", value_index);
    return Error::InvalidProgram;
  }
  if (tensor.storage_offset() != 0) {
    KILN_LOG(Error, "value %zu: storage offset %d; only 0 is supported", value_index,
             static_cast<int>(tensor.storage_offset()));
    return Error::InvalidProgram;
  }
  switch (tensor.shape_dynamism()) {
    case kiln_pte::TensorShapeDynamism::STATIC:
      shape.dynamism = ShapeDynamism::Static;
      break;
    case kiln_pte::TensorShapeDynamism::DYNAMIC_BOUND:
      shape.dynamism = ShapeDynamism::DynamicBound;
      break;
    default:
      KILN_LOG(Error, "value %zu: unbounded dynamic shapes are not supported (they would need "
               "allocation at execution)", value_index);
      return Error::NotSupported;
  }
  return shape;
}

Tag tag_of(kiln_pte::KernelTypes type) {
  switch (type) {
    case kiln_pte::KernelTypes::Int: return Tag::Int;
    case kiln_pte::KernelTypes::Bool: return Tag::Bool;
    case kiln_pte::KernelTypes::Double: return Tag::Double;
    case kiln_pte::KernelTypes::Tensor: return Tag::Tensor;
    case kiln_pte::KernelTypes::String: return Tag::String;
    case kiln_pte::KernelTypes::IntList: return Tag::ListInt;
    case kiln_pte::KernelTypes::DoubleList: return Tag::ListDouble;
    case kiln_pte::KernelTypes::BoolList: return Tag::ListBool;
    case kiln_pte::KernelTypes::TensorList: return Tag::ListTensor;
    case kiln_pte::KernelTypes::OptionalTensorList: return Tag::ListOptionalTensor;
    default: return Tag::None;
  }
}

size_t write_operator_name(const kiln_pte::Operator& op, char* buf, size_t size) {
  const size_t name_length = op.name() != nullptr ? op.name()->size() : 0;
  const size_t overload_length = op.overload() != nullptr ? op.overload()->size() : 0;
  const size_t needed = name_length + (overload_length > 0 ? 1 + overload_length : 0) + 1;
  if (buf == nullptr || size < needed) return needed;
  char* out = buf;
  if (name_length > 0) std::memcpy(out, op.name()->data(), name_length);
  out += name_length;
  if (overload_length > 0) {
    *out++ = '.';
    std::memcpy(out, op.overload()->data(), overload_length);
    out += overload_length;
  }
  *out = '\0';
  return needed;
}

}  // namespace internal
}  // namespace kiln
