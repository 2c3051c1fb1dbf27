// Method init: builds the value table, tensors, argument lists and delegates in the
// caller's memory, checking every index the program holds.
#include <cstring>
#include <new>

#include "kiln_schema/program_generated.h"
#include "runtime/executor/method.h"
#include "runtime/executor/method_layout.h"
#include "runtime/executor/program.h"
#include "runtime/executor/value_parsing.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace {

using flatbuffers::uoffset_t;
using internal::PreparedInstruction;

template <typename T>
size_t length(const flatbuffers::Vector<T>* vector) {
  return vector != nullptr ? vector->size() : 0;
}

/// Hands out pieces of the sections init allocated. Taking more than the layout
/// counted is a runtime bug, reported as Internal rather than overrunning.
class SectionCursor {
 public:
  SectionCursor(void* base, size_t bytes) : base_(static_cast<uint8_t*>(base)), bytes_(bytes) {}

  template <typename T>
  T* take(size_t count) {
    const size_t bytes = count * sizeof(T);
    if (count > bytes_ / sizeof(T) || bytes > bytes_ - used_) return nullptr;
    T* out = reinterpret_cast<T*>(base_ + used_);
    used_ += bytes;
    return out;
  }

 private:
  uint8_t* base_;
  size_t bytes_;
  size_t used_ = 0;
};

/// Everything init builds, before it is handed to the Method.
struct InitState {
  const Program* program;
  const kiln_pte::ExecutionPlan* plan;
  const MemoryManager* memory;
  EValue* values;
  size_t num_values;
  Tensor* tensors;
  size_t num_tensors_built;
  SectionCursor shapes;
  SectionCursor dim_orders;
  SectionCursor value_pointers;
  SectionCursor tensor_pointers;
  SectionCursor int_scratch;
  SectionCursor names;
  internal::ResolvedOperator* operators;
  size_t num_operators;
  SectionCursor compile_specs;
};

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

/// Where a tensor's data lives: a constant, a planned buffer, or (nullptr) the caller.
Result<void*> tensor_data(InitState& s, const kiln_pte::Tensor& tensor, size_t nbytes,
                          size_t value_index) {
  const kiln_pte::AllocationDetails* allocation = tensor.allocation_info();
  if (allocation == nullptr) {
    if (tensor.data_buffer_idx() == 0) return static_cast<void*>(nullptr);
    Result<const void*> constant = s.program->constant_data(tensor.data_buffer_idx(), nbytes);
    if (!constant.ok()) {
      KILN_LOG(Error, "value %zu: constant data %u is not usable", value_index,
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
    KILN_LOG(Error, "value %zu: memory id %u; the method has planned buffers 1..%zu", value_index,
             memory_id, num_buffers);
    return Error::ProgramIndexOutOfRange;
  }
  const uint64_t offset = static_cast<uint64_t>(allocation->memory_offset_low()) |
                          static_cast<uint64_t>(allocation->memory_offset_high()) << 32;
  const uint64_t buffer_size = static_cast<uint64_t>(sizes->Get(memory_id));
  if (offset > buffer_size || nbytes > buffer_size - offset) {
    KILN_LOG(Error, "value %zu: bytes [%llu, +%zu) lie outside planned buffer %u (%llu bytes)",
             value_index, static_cast<unsigned long long>(offset), nbytes, memory_id - 1,
             static_cast<unsigned long long>(buffer_size));
    return Error::InvalidProgram;
  }
  return s.memory->planned_memory->get_offset_address(memory_id - 1, static_cast<size_t>(offset),
                                                     nbytes);
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

Error resolve_operators(InitState& s) {
  for (size_t i = 0; i < s.num_operators; ++i) {
    const kiln_pte::Operator* op = s.plan->operators()->Get(static_cast<uoffset_t>(i));
    const size_t bytes = internal::write_operator_name(*op, nullptr, 0);
    char* name = s.names.take<char>(bytes);
    if (name == nullptr) return out_of_space("operator names");
    internal::write_operator_name(*op, name, bytes);
    OpFunction function = nullptr;
    if (op->name() != nullptr) {
      function = get_op_function(op->name()->c_str(),
                                 op->overload() != nullptr ? op->overload()->c_str() : "");
    }
    s.operators[i] = {function, name, false};
  }
  return Error::Ok;
}

Error prepare_args(InitState& s, const flatbuffers::Vector<int32_t>* args, size_t pc,
                   Span<EValue*>* out) {
  const size_t n = length(args);
  EValue** pointers = s.value_pointers.take<EValue*>(n);
  if (n > 0 && pointers == nullptr) return out_of_space("instruction arguments");
  for (size_t k = 0; k < n; ++k) {
    const int32_t index = args->Get(static_cast<uoffset_t>(k));
    KILN_TRY(check_value_index(index, s.num_values, "instruction", pc));
    EValue* arg = &s.values[index];
    // An unplanned tensor gets memory only if it is a method input or output; any
    // other one would hand the kernel a null pointer.
    if (arg->is_tensor() && arg->to_tensor().const_data_ptr() == nullptr &&
        arg->to_tensor().nbytes() > 0) {
      bool is_io = false;
      for (const auto* io : {s.plan->inputs(), s.plan->outputs()}) {
        for (size_t j = 0; j < length(io) && !is_io; ++j) {
          is_io = io->Get(static_cast<uoffset_t>(j)) == index;
        }
      }
      if (!is_io) {
        KILN_LOG(Error, "instruction %zu: argument %zu (value %d) is a tensor without memory "
                 "(not constant, not planned, not a method input or output)", pc, k,
                 static_cast<int>(index));
        return Error::InvalidProgram;
      }
    }
    pointers[k] = arg;
  }
  *out = {pointers, n};
  return Error::Ok;
}

const char* delegate_name(const kiln_pte::ExecutionPlan& plan, size_t index) {
  const auto* id = plan.delegates()->Get(static_cast<uoffset_t>(index))->id();
  return id != nullptr ? id->c_str() : "(unnamed delegate)";
}

Error prepare_instruction(InitState& s, const kiln_pte::Instruction& instruction, size_t pc,
                          size_t num_instructions, PreparedInstruction* out, bool* missing) {
  *out = PreparedInstruction{};
  switch (instruction.instr_args_type()) {
    case kiln_pte::InstructionArguments::KernelCall: {
      const kiln_pte::KernelCall* call = instruction.instr_args_as_KernelCall();
      if (call == nullptr) break;
      const int32_t op = call->op_index();
      if (op < 0 || static_cast<size_t>(op) >= s.num_operators) {
        KILN_LOG(Error, "instruction %zu calls operator %d; the method has %zu", pc,
                 static_cast<int>(op), s.num_operators);
        return Error::ProgramIndexOutOfRange;
      }
      internal::ResolvedOperator& resolved = s.operators[op];
      if (resolved.function == nullptr) {
        if (!resolved.reported_missing) {
          KILN_LOG(Error, "operator %s is not registered (program needs it for instruction %zu)",
                   resolved.name, pc);
          resolved.reported_missing = true;
        }
        *missing = true;
      }
      out->kind = PreparedInstruction::Kind::Kernel;
      out->a = static_cast<uint32_t>(op);
      out->function = resolved.function;
      out->name = resolved.name;
      return prepare_args(s, call->args(), pc, &out->args);
    }
    case kiln_pte::InstructionArguments::DelegateCall: {
      const kiln_pte::DelegateCall* call = instruction.instr_args_as_DelegateCall();
      if (call == nullptr) break;
      const int32_t index = call->delegate_index();
      const size_t num_delegates = length(s.plan->delegates());
      if (index < 0 || static_cast<size_t>(index) >= num_delegates) {
        KILN_LOG(Error, "instruction %zu calls delegate %d; the method has %zu", pc,
                 static_cast<int>(index), num_delegates);
        return Error::ProgramIndexOutOfRange;
      }
      out->kind = PreparedInstruction::Kind::Delegate;
      out->a = static_cast<uint32_t>(index);
      out->name = delegate_name(*s.plan, static_cast<size_t>(index));
      return prepare_args(s, call->args(), pc, &out->args);
    }
    case kiln_pte::InstructionArguments::MoveCall: {
      const kiln_pte::MoveCall* call = instruction.instr_args_as_MoveCall();
      if (call == nullptr) break;
      KILN_TRY(check_value_index(call->move_from(), s.num_values, "move instruction", pc));
      KILN_TRY(check_value_index(call->move_to(), s.num_values, "move instruction", pc));
      out->kind = PreparedInstruction::Kind::Move;
      out->a = static_cast<uint32_t>(call->move_from());
      out->b = static_cast<uint32_t>(call->move_to());
      out->name = "MoveCall";
      return Error::Ok;
    }
    case kiln_pte::InstructionArguments::JumpFalseCall: {
      const kiln_pte::JumpFalseCall* call = instruction.instr_args_as_JumpFalseCall();
      if (call == nullptr) break;
      KILN_TRY(check_value_index(call->cond_value_index(), s.num_values, "jump instruction", pc));
      const int32_t destination = call->destination_instruction();
      // Jumping to num_instructions ends the method.
      if (destination < 0 || static_cast<size_t>(destination) > num_instructions) {
        KILN_LOG(Error, "instruction %zu jumps to %d; the method has %zu instructions", pc,
                 static_cast<int>(destination), num_instructions);
        return Error::ProgramIndexOutOfRange;
      }
      out->kind = PreparedInstruction::Kind::JumpFalse;
      out->a = static_cast<uint32_t>(call->cond_value_index());
      out->b = static_cast<uint32_t>(destination);
      out->name = "JumpFalseCall";
      return Error::Ok;
    }
    case kiln_pte::InstructionArguments::FreeCall: {
      const kiln_pte::FreeCall* call = instruction.instr_args_as_FreeCall();
      if (call == nullptr) break;
      KILN_TRY(check_value_index(call->value_index(), s.num_values, "free instruction", pc));
      out->kind = PreparedInstruction::Kind::Free;
      out->a = static_cast<uint32_t>(call->value_index());
      out->name = "FreeCall";
      return Error::Ok;
    }
    default:
      KILN_LOG(Error, "instruction %zu has unknown kind %d", pc,
               static_cast<int>(instruction.instr_args_type()));
      return Error::InvalidProgram;
  }
  KILN_LOG(Error, "instruction %zu is a %s without its table", pc,
           kiln_pte::EnumNameInstructionArguments(instruction.instr_args_type()));
  return Error::InvalidProgram;
}

}  // namespace

namespace internal {

Result<Span<const uint8_t>> delegate_blob(const Program& program,
                                          const kiln_pte::BackendDelegate& delegate, size_t index) {
  const kiln_pte::BackendDelegateDataReference* processed = delegate.processed();
  if (processed == nullptr) {
    KILN_LOG(Error, "delegate %zu has no processed data reference", index);
    return Error::InvalidProgram;
  }
  if (processed->location() == kiln_pte::DataLocation::INLINE) {
    const auto* inline_data = program.flatbuffer()->backend_delegate_data();
    if (processed->index() >= length(inline_data)) {
      KILN_LOG(Error, "delegate %zu uses inline data %u; the program has %zu", index,
               processed->index(), length(inline_data));
      return Error::ProgramIndexOutOfRange;
    }
    const auto* data = inline_data->Get(processed->index())->data();
    return Span<const uint8_t>(data != nullptr ? data->data() : nullptr, length(data));
  }
  if (processed->location() == kiln_pte::DataLocation::SEGMENT) {
    Result<Span<const uint8_t>> blob = program.segment_data(processed->index());
    if (!blob.ok()) KILN_LOG(Error, "delegate %zu: its segment is not usable", index);
    return blob;
  }
  KILN_LOG(Error, "delegate %zu: unknown data location %d", index,
           static_cast<int>(processed->location()));
  return Error::InvalidProgram;
}

}  // namespace internal

Error Method::init() {
  KILN_TRY_ASSIGN(const internal::MethodLayout layout, internal::compute_method_layout(*plan_));
  internal::Allocation allocations[internal::kNumSections];
  KILN_TRY(internal::method_allocations(layout, allocations));
  void* sections[internal::kNumSections];
  KILN_TRY(internal::allocate_sections(*memory_.method_allocator, allocations, sections));
  auto section = [&](internal::Section which) {
    const size_t i = static_cast<size_t>(which);
    return SectionCursor(sections[i], allocations[i].bytes);
  };
  auto* values = static_cast<EValue*>(sections[static_cast<size_t>(internal::Section::Values)]);
  for (size_t i = 0; i < layout.num_values; ++i) new (&values[i]) EValue();

  num_inputs_ = layout.num_inputs;
  num_outputs_ = length(plan_->outputs());
  for (size_t i = 0; i < num_inputs_; ++i) {
    KILN_TRY(check_value_index(plan_->inputs()->Get(static_cast<uoffset_t>(i)), layout.num_values,
                               "method input", i));
  }
  for (size_t i = 0; i < num_outputs_; ++i) {
    KILN_TRY(check_value_index(plan_->outputs()->Get(static_cast<uoffset_t>(i)),
                               layout.num_values, "method output", i));
  }
  KILN_TRY(check_planned_buffers(*plan_, memory_));

  InitState s{program_,
              plan_,
              &memory_,
              values,
              layout.num_values,
              static_cast<Tensor*>(sections[static_cast<size_t>(internal::Section::Tensors)]),
              0,
              section(internal::Section::TensorShapes),
              section(internal::Section::DimOrders),
              section(internal::Section::ValuePointers),
              section(internal::Section::TensorPointers),
              section(internal::Section::IntScratch),
              section(internal::Section::OperatorNames),
              static_cast<internal::ResolvedOperator*>(
                  sections[static_cast<size_t>(internal::Section::Operators)]),
              layout.num_operators,
              section(internal::Section::CompileSpecs)};
  KILN_TRY(parse_values(s));
  values_ = values;
  num_values_ = layout.num_values;
  KILN_TRY(resolve_operators(s));

  auto* instructions = static_cast<PreparedInstruction*>(
      sections[static_cast<size_t>(internal::Section::Instructions)]);
  bool missing = false;
  for (size_t pc = 0; pc < layout.num_instructions; ++pc) {
    const kiln_pte::Instruction* instruction =
        plan_->chains()->Get(0)->instructions()->Get(static_cast<uoffset_t>(pc));
    KILN_TRY(prepare_instruction(s, *instruction, pc, layout.num_instructions, &instructions[pc],
                                 &missing));
  }
  if (missing) {
    size_t count = 0;
    for (size_t i = 0; i < s.num_operators; ++i) count += s.operators[i].reported_missing ? 1 : 0;
    KILN_LOG(Error, "method %s: %zu operators are not registered (listed above)",
             method_meta().name(), count);
    return Error::OperatorMissing;
  }
  if (length(plan_->chains()) > 1) {
    KILN_LOG(Info, "method %s has %u chains; only chain 0 runs", method_meta().name(),
             plan_->chains()->size());
  }
  instructions_ = instructions;
  num_instructions_ = layout.num_instructions;

  // Inputs: tensors must be given data before execute; other kinds have a value.
  input_set_ = static_cast<bool*>(sections[static_cast<size_t>(internal::Section::InputFlags)]);
  for (size_t i = 0; i < num_inputs_; ++i) {
    input_set_[i] = !values_[input_value_index(i)].is_tensor();
  }

  // Delegates last: their init may be expensive, and everything else is valid now.
  delegates_ = static_cast<internal::DelegateInstance*>(
      sections[static_cast<size_t>(internal::Section::Delegates)]);
  for (size_t k = 0; k < layout.num_delegates; ++k) {
    const kiln_pte::BackendDelegate* delegate = plan_->delegates()->Get(static_cast<uoffset_t>(k));
    if (delegate->id() == nullptr) {
      KILN_LOG(Error, "delegate %zu has no backend id", k);
      return Error::InvalidProgram;
    }
    const BackendInterface* backend = get_backend(delegate->id()->c_str(), delegate->id()->size());
    if (backend == nullptr) {
      KILN_LOG(Error, "backend %s is not registered (program needs it for delegate %zu)",
               delegate->id()->c_str(), k);
      return Error::NotFound;
    }
    if (!backend->is_available()) {
      KILN_LOG(Error, "backend %s is registered but not available (delegate %zu)",
               delegate->id()->c_str(), k);
      return Error::NotSupported;
    }
    KILN_TRY_ASSIGN(const Span<const uint8_t> blob,
                    internal::delegate_blob(*program_, *delegate, k));
    const auto* specs = delegate->compile_specs();
    const size_t num_specs = length(specs);
    CompileSpec* compile_specs = s.compile_specs.take<CompileSpec>(num_specs);
    if (num_specs > 0 && compile_specs == nullptr) return out_of_space("compile specs");
    for (size_t j = 0; j < num_specs; ++j) {
      const kiln_pte::CompileSpec* spec = specs->Get(static_cast<uoffset_t>(j));
      compile_specs[j] = {spec->key() != nullptr ? spec->key()->c_str() : "",
                          spec->key() != nullptr ? spec->key()->size() : 0,
                          spec->value() != nullptr ? spec->value()->data() : nullptr,
                          length(spec->value())};
    }
    BackendInitContext context{memory_.method_allocator};
    Result<DelegateHandle*> handle = backend->init(context, blob, {compile_specs, num_specs});
    if (!handle.ok()) {
      KILN_LOG(Error, "backend %s failed to initialize delegate %zu: %s", delegate->id()->c_str(),
               k, error_name(handle.error()));
      return handle.error();
    }
    delegates_[k] = {backend, *handle, delegate->id()->c_str()};
    num_delegates_ = k + 1;
  }
  initialized_ = true;
  return Error::Ok;
}

}  // namespace kiln
