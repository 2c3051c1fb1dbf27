// Method init, the value table: scalars, strings, tensors (placed in constants or the
// planned buffers) and lists, every index checked.
#include <cstring>

#include <cinttypes>
#include <new>

#include "kiln_schema/program_generated.h"
#include "runtime/executor/flatbuffer_vectors.h"
#include "runtime/executor/method_init_state.h"
#include "runtime/executor/program.h"
#include "runtime/executor/value_parsing.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace internal {

using flatbuffers::uoffset_t;

Error out_of_space(const char* what) {
  KILN_LOG(Error, "method init: %s section exhausted (layout mismatch)", what);
  return Error::Internal;
}

Error check_value_index(int64_t index, size_t num_values, const char* what, size_t owner) {
  if (index < 0 || static_cast<uint64_t>(index) >= num_values) {
    KILN_LOG(Error, "%s %zu refers to value %lld; the method has %zu values", what, owner,
             static_cast<long long>(index), num_values);
    return Error::ProgramIndexOutOfRange;
  }
  return Error::Ok;
}

Error check_planned_buffers(const kiln_pte::ExecutionPlan& plan, const MemoryManager& memory) {
  const auto* sizes = plan.non_const_buffer_sizes();
  const size_t needed = length(sizes) > 0 ? length(sizes) - 1 : 0;
  if (needed == 0) return Error::Ok;
  const size_t provided = memory.planned_memory != nullptr ? memory.planned_memory->num_buffers() : 0;
  if (provided < needed) {
    KILN_LOG(Error, "program needs %zu planned buffers, %zu provided", needed, provided);
    return Error::MemoryAllocationFailed;
  }
  for (size_t i = 0; i < needed; ++i) {
    const int64_t size = sizes->Get(static_cast<uoffset_t>(i + 1));
    if (size < 0) {
      KILN_LOG(Error, "planned buffer %zu: negative size %lld in the program", i,
               static_cast<long long>(size));
      return Error::InvalidProgram;
    }
    const size_t available = memory.planned_memory->buffer(i).size();
    if (static_cast<uint64_t>(size) > available) {
      KILN_LOG(Error, "planned buffer %zu: program needs %lld bytes, %zu provided", i,
               static_cast<long long>(size), available);
      return Error::MemoryAllocationFailed;
    }
  }
  return Error::Ok;
}

namespace {

/// A planned tensor with data in the program is a mutable buffer (state kept between
/// executions): its initial value is copied into its planned bytes, at every init, so
/// that loading the method again resets the state.
Error load_initial_state(InitState& s, const kiln_pte::Tensor& tensor, void* planned,
                         size_t nbytes, size_t value_index) {
  Result<const void*> initial = s.program->mutable_data(tensor.data_buffer_idx(), nbytes);
  if (!initial.ok()) {
    KILN_LOG(Error, "value %zu: the %zu bytes of initial state %" PRIu32 " are not usable", value_index,
             nbytes, tensor.data_buffer_idx());
    return initial.error();
  }
  if (nbytes > 0) std::memcpy(planned, *initial, nbytes);
  return Error::Ok;
}

/// Where a tensor's data lives: a constant, a planned buffer (with initial data for a
/// mutable buffer), or (nullptr) the caller.
Result<void*> tensor_data(InitState& s, const kiln_pte::Tensor& tensor, size_t nbytes,
                          size_t value_index) {
  const kiln_pte::AllocationDetails* allocation = tensor.allocation_info();
  if (allocation == nullptr) {
    if (tensor.data_buffer_idx() == 0) return static_cast<void*>(nullptr);
    Result<const void*> constant = s.program->constant_data(tensor.data_buffer_idx(), nbytes);
    if (!constant.ok()) {
      KILN_LOG(Error, "value %zu: constant data %" PRIu32 " is not usable", value_index,
               tensor.data_buffer_idx());
      return constant.error();
    }
    // Kernels only read constants; Tensor has one (mutable) data pointer for both uses.
    return const_cast<void*>(*constant);
  }
  const auto* sizes = s.plan->non_const_buffer_sizes();
  const size_t num_buffers = length(sizes) > 0 ? length(sizes) - 1 : 0;
  const uint32_t memory_id = allocation->memory_id();
  if (memory_id == 0 || memory_id > num_buffers) {
    KILN_LOG(Error, "value %zu: memory id %" PRIu32 "; the method has planned buffers 1..%zu", value_index,
             memory_id, num_buffers);
    return Error::ProgramIndexOutOfRange;
  }
  const uint64_t offset = static_cast<uint64_t>(allocation->memory_offset_low()) |
                          static_cast<uint64_t>(allocation->memory_offset_high()) << 32;
  const uint64_t buffer_size = static_cast<uint64_t>(sizes->Get(memory_id));
  if (offset > buffer_size || nbytes > buffer_size - offset) {
    KILN_LOG(Error, "value %zu: bytes [%llu, +%zu) lie outside planned buffer %" PRIu32 " (%llu bytes)",
             value_index, static_cast<unsigned long long>(offset), nbytes, memory_id - 1,
             static_cast<unsigned long long>(buffer_size));
    return Error::InvalidProgram;
  }
  KILN_TRY_ASSIGN(void* planned, s.memory->planned_memory->get_offset_address(
                                     memory_id - 1, static_cast<size_t>(offset), nbytes));
  if (tensor.data_buffer_idx() != 0) KILN_TRY(load_initial_state(s, tensor, planned, nbytes, value_index));
  return planned;
}

Error parse_tensor(InitState& s, const kiln_pte::Tensor& tensor, size_t value_index) {
  KILN_TRY_ASSIGN(const internal::TensorShape shape, internal::check_tensor_shape(tensor, value_index));
  KILN_TRY_ASSIGN(void* data, tensor_data(s, tensor, shape.nbytes, value_index));
  // Kernels access elements through typed pointers; element sizes are powers of two.
  const size_t alignment = element_size(shape.scalar_type);
  if (reinterpret_cast<uintptr_t>(data) % alignment != 0) {
    KILN_LOG(Error, "value %zu: data at %p is not aligned to its %zu-byte %s elements",
             value_index, data, alignment, scalar_type_name(shape.scalar_type));
    return Error::InvalidProgram;
  }
  const size_t dim = shape.sizes.size();
  SizesType* sizes = s.shapes.take<SizesType>(dim);
  StridesType* strides = s.shapes.take<StridesType>(dim);
  DimOrderType* dim_order = s.dim_orders.take<DimOrderType>(dim);
  if ((dim > 0 && (sizes == nullptr || strides == nullptr || dim_order == nullptr))) {
    return out_of_space("tensor shape");
  }
  for (size_t d = 0; d < dim; ++d) {
    sizes[d] = shape.sizes[d];
    dim_order[d] = shape.dim_order[d];
  }
  Tensor* t = new (&s.tensors[s.num_tensors_built++])
      Tensor(shape.scalar_type, static_cast<int32_t>(dim), sizes, dim_order, strides, data,
             shape.dynamism);
  s.values[value_index] = EValue(t);
  return Error::Ok;
}

/// Scalars, strings and tensors; lists come in a second pass because they refer to
/// other values.
Error parse_plain_value(InitState& s, const kiln_pte::EValue& value, size_t i) {
  switch (value.val_type()) {
    case kiln_pte::KernelTypes::NONE:
    case kiln_pte::KernelTypes::Null:
      s.values[i] = EValue();
      return Error::Ok;
    case kiln_pte::KernelTypes::Int:
      if (value.val_as_Int() == nullptr) break;
      s.values[i] = EValue(static_cast<int64_t>(value.val_as_Int()->int_val()));
      return Error::Ok;
    case kiln_pte::KernelTypes::Bool:
      if (value.val_as_Bool() == nullptr) break;
      s.values[i] = EValue(value.val_as_Bool()->bool_val());
      return Error::Ok;
    case kiln_pte::KernelTypes::Double:
      if (value.val_as_Double() == nullptr) break;
      s.values[i] = EValue(value.val_as_Double()->double_val());
      return Error::Ok;
    case kiln_pte::KernelTypes::String: {
      if (value.val_as_String() == nullptr) break;
      const flatbuffers::String* str = value.val_as_String()->string_val();
      s.values[i] = str != nullptr ? EValue::string(str->data(), str->size()) : EValue::string("", 0);
      return Error::Ok;
    }
    case kiln_pte::KernelTypes::Tensor:
      if (value.val_as_Tensor() == nullptr) break;
      return parse_tensor(s, *value.val_as_Tensor(), i);
    case kiln_pte::KernelTypes::IntList:
    case kiln_pte::KernelTypes::DoubleList:
    case kiln_pte::KernelTypes::BoolList:
    case kiln_pte::KernelTypes::TensorList:
    case kiln_pte::KernelTypes::OptionalTensorList:
      return Error::Ok;
    default:
      KILN_LOG(Error, "value %zu has unknown type %d", i, static_cast<int>(value.val_type()));
      return Error::InvalidProgram;
  }
  KILN_LOG(Error, "value %zu is a %s without its table", i,
           kiln_pte::EnumNameKernelTypes(value.val_type()));
  return Error::InvalidProgram;
}

Error parse_int_list(InitState& s, const kiln_pte::IntList& list, size_t i) {
  const size_t n = length(list.items());
  EValue** items = s.value_pointers.take<EValue*>(n);
  int64_t* scratch = s.int_scratch.take<int64_t>(n);
  if (n > 0 && (items == nullptr || scratch == nullptr)) return out_of_space("int list");
  for (size_t k = 0; k < n; ++k) {
    const int64_t index = list.items()->Get(static_cast<uoffset_t>(k));
    KILN_TRY(check_value_index(index, s.num_values, "int list value", i));
    if (!s.values[index].is_int()) {
      KILN_LOG(Error, "value %zu: int list item %zu is value %lld, a %s, not an Int", i, k,
               static_cast<long long>(index), tag_name(s.values[index].tag()));
      return Error::InvalidProgram;
    }
    items[k] = &s.values[index];
  }
  s.values[i] = EValue::int_list({items, scratch, n});
  return Error::Ok;
}

Error parse_tensor_list(InitState& s, const flatbuffers::Vector<int32_t>* indices, size_t i,
                        bool optional) {
  const size_t n = length(indices);
  Tensor** items = s.tensor_pointers.take<Tensor*>(n);
  if (n > 0 && items == nullptr) return out_of_space("tensor list");
  for (size_t k = 0; k < n; ++k) {
    const int32_t index = indices->Get(static_cast<uoffset_t>(k));
    // Optional lists may write None as -1 instead of pointing at a None value.
    if (optional && index == -1) {
      items[k] = nullptr;
      continue;
    }
    KILN_TRY(check_value_index(index, s.num_values, "tensor list value", i));
    const EValue& item = s.values[index];
    if (item.is_tensor()) {
      items[k] = &item.to_tensor();
    } else if (optional && item.is_none()) {
      items[k] = nullptr;
    } else {
      KILN_LOG(Error, "value %zu: tensor list item %zu is value %d, a %s", i, k,
               static_cast<int>(index), tag_name(item.tag()));
      return Error::InvalidProgram;
    }
  }
  s.values[i] = optional ? EValue::optional_tensor_list({items, n}) : EValue::tensor_list({items, n});
  return Error::Ok;
}

Error parse_list_value(InitState& s, const kiln_pte::EValue& value, size_t i) {
  switch (value.val_type()) {
    case kiln_pte::KernelTypes::IntList:
      if (value.val_as_IntList() == nullptr) break;
      return parse_int_list(s, *value.val_as_IntList(), i);
    case kiln_pte::KernelTypes::DoubleList: {
      if (value.val_as_DoubleList() == nullptr) break;
      const auto* items = value.val_as_DoubleList()->items();
      s.values[i] = EValue::double_list({items != nullptr ? items->data() : nullptr, length(items)});
      return Error::Ok;
    }
    case kiln_pte::KernelTypes::BoolList: {
      if (value.val_as_BoolList() == nullptr) break;
      const auto* items = value.val_as_BoolList()->items();
      // Kernels read these bytes as bool, for which only 0 and 1 are valid.
      for (size_t k = 0; k < length(items); ++k) {
        if (items->Get(static_cast<uoffset_t>(k)) > 1) {
          KILN_LOG(Error, "value %zu: bool list item %zu is %u, not 0 or 1", i, k,
                   static_cast<unsigned>(items->Get(static_cast<uoffset_t>(k))));
          return Error::InvalidProgram;
        }
      }
      s.values[i] = EValue::bool_list(
          {items != nullptr ? reinterpret_cast<const bool*>(items->data()) : nullptr, length(items)});
      return Error::Ok;
    }
    case kiln_pte::KernelTypes::TensorList:
      if (value.val_as_TensorList() == nullptr) break;
      return parse_tensor_list(s, value.val_as_TensorList()->items(), i, false);
    case kiln_pte::KernelTypes::OptionalTensorList:
      if (value.val_as_OptionalTensorList() == nullptr) break;
      return parse_tensor_list(s, value.val_as_OptionalTensorList()->items(), i, true);
    default:
      return Error::Ok;
  }
  KILN_LOG(Error, "value %zu is a %s without its table", i,
           kiln_pte::EnumNameKernelTypes(value.val_type()));
  return Error::InvalidProgram;
}

}  // namespace

Error parse_values(InitState& s) {
  const auto* values = s.plan->values();
  for (size_t i = 0; i < s.num_values; ++i) {
    KILN_TRY(parse_plain_value(s, *values->Get(static_cast<uoffset_t>(i)), i));
  }
  for (size_t i = 0; i < s.num_values; ++i) {
    KILN_TRY(parse_list_value(s, *values->Get(static_cast<uoffset_t>(i)), i));
  }
  return Error::Ok;
}

}  // namespace internal
}  // namespace kiln
