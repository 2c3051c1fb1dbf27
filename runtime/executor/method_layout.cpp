#include "runtime/executor/method_layout.h"

#include "kiln_schema/program_generated.h"
#include "runtime/executor/flatbuffer_vectors.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace internal {
namespace {

const char* const kSectionNames[kNumSections] = {
    "values",        "tensors",      "tensor shapes",  "dim orders",    "value pointers",
    "tensor pointers", "int scratch", "instructions",  "operators",  "operator names",
    "delegates",     "compile specs", "input flags"};

}  // namespace

Result<MethodLayout> compute_method_layout(const kiln_pte::ExecutionPlan& plan) {
  MethodLayout layout;
  bool ok = true;
  const auto* values = plan.values();
  layout.num_values = length(values);
  for (size_t i = 0; i < layout.num_values; ++i) {
    const kiln_pte::EValue* value = values->Get(static_cast<flatbuffers::uoffset_t>(i));
    switch (value->val_type()) {
      // A union may carry a type without a table (the verifier allows it); such
      // values count as empty here and are rejected when init parses them.
      case kiln_pte::KernelTypes::Tensor:
        if (const auto* tensor = value->val_as_Tensor()) {
          layout.num_tensors += 1;
          ok = ok && checked_add(layout.total_dims, length(tensor->sizes()), &layout.total_dims);
        }
        break;
      case kiln_pte::KernelTypes::IntList:
        if (const auto* list = value->val_as_IntList()) {
          ok = ok && checked_add(layout.int_list_items, length(list->items()),
                                 &layout.int_list_items);
        }
        break;
      case kiln_pte::KernelTypes::TensorList:
        if (const auto* list = value->val_as_TensorList()) {
          ok = ok && checked_add(layout.tensor_list_items, length(list->items()),
                                 &layout.tensor_list_items);
        }
        break;
      case kiln_pte::KernelTypes::OptionalTensorList:
        if (const auto* list = value->val_as_OptionalTensorList()) {
          ok = ok && checked_add(layout.tensor_list_items, length(list->items()),
                                 &layout.tensor_list_items);
        }
        break;
      default:
        break;
    }
  }
  const auto* chains = plan.chains();
  if (length(chains) > 0) {
    const auto* instructions = chains->Get(0)->instructions();
    layout.num_instructions = length(instructions);
    for (size_t i = 0; i < layout.num_instructions; ++i) {
      const kiln_pte::Instruction* instruction =
          instructions->Get(static_cast<flatbuffers::uoffset_t>(i));
      size_t args = 0;
      if (const auto* call = instruction->instr_args_as_KernelCall()) args = length(call->args());
      if (const auto* call = instruction->instr_args_as_DelegateCall()) args = length(call->args());
      ok = ok && checked_add(layout.instruction_args, args, &layout.instruction_args);
    }
  }
  const auto* operators = plan.operators();
  layout.num_operators = length(operators);
  for (size_t i = 0; i < layout.num_operators; ++i) {
    const kiln_pte::Operator* op = operators->Get(static_cast<flatbuffers::uoffset_t>(i));
    // "name" "." "overload" "\0"; the sum stays far below SIZE_MAX since each string
    // lies inside the program.
    ok = ok && checked_add(layout.operator_name_bytes,
                           string_length(op->name()) + string_length(op->overload()) + 2,
                           &layout.operator_name_bytes);
  }
  const auto* delegates = plan.delegates();
  layout.num_delegates = length(delegates);
  for (size_t i = 0; i < layout.num_delegates; ++i) {
    ok = ok && checked_add(layout.num_compile_specs,
                           length(delegates->Get(static_cast<flatbuffers::uoffset_t>(i))->compile_specs()),
                           &layout.num_compile_specs);
  }
  layout.num_inputs = length(plan.inputs());
  if (!ok) {
    KILN_LOG(Error, "method %s: table sizes overflow", plan.name() != nullptr ? plan.name()->c_str() : "");
    return Error::InvalidProgram;
  }
  return layout;
}

Error method_allocations(const MethodLayout& layout, Allocation (&out)[kNumSections]) {
  struct Entry {
    size_t count;
    size_t element_size;
    size_t alignment;
  };
  size_t pointer_count = 0;
  size_t shape_count = 0;
  size_t input_flags = 0;
  bool ok = checked_add(layout.int_list_items, layout.instruction_args, &pointer_count) &&
            checked_mul(layout.total_dims, 2, &shape_count) &&
            checked_mul(layout.num_inputs, 2, &input_flags);
  const Entry entries[kNumSections] = {
      {layout.num_values, sizeof(EValue), alignof(EValue)},
      {layout.num_tensors, sizeof(Tensor), alignof(Tensor)},
      {shape_count, sizeof(int32_t), alignof(int32_t)},
      {layout.total_dims, sizeof(uint8_t), alignof(uint8_t)},
      {pointer_count, sizeof(EValue*), alignof(EValue*)},
      {layout.tensor_list_items, sizeof(Tensor*), alignof(Tensor*)},
      {layout.int_list_items, sizeof(int64_t), alignof(int64_t)},
      {layout.num_instructions, sizeof(PreparedInstruction), alignof(PreparedInstruction)},
      {layout.num_operators, sizeof(ResolvedOperator), alignof(ResolvedOperator)},
      {layout.operator_name_bytes, 1, 1},
      {layout.num_delegates, sizeof(DelegateInstance), alignof(DelegateInstance)},
      {layout.num_compile_specs, sizeof(CompileSpec), alignof(CompileSpec)},
      // Two flags per input: set, and read by an instruction.
      {input_flags, sizeof(bool), alignof(bool)},
  };
  for (size_t i = 0; i < kNumSections; ++i) {
    ok = ok && checked_mul(entries[i].count, entries[i].element_size, &out[i].bytes);
    out[i].alignment = entries[i].alignment;
  }
  if (!ok) {
    KILN_LOG(Error, "method memory size overflows");
    return Error::InvalidProgram;
  }
  return Error::Ok;
}

size_t worst_case_allocator_bytes(const Allocation (&allocations)[kNumSections]) {
  // The padding depends on the base address modulo the largest alignment, so try
  // every residue and keep the worst. Sizes were overflow-checked one by one; their
  // sum is bounded by the program's size times a small factor.
  size_t max_alignment = 1;
  for (const Allocation& a : allocations) {
    if (a.alignment > max_alignment) max_alignment = a.alignment;
  }
  size_t worst = 0;
  for (size_t base = 0; base < max_alignment; ++base) {
    size_t cursor = base;
    for (const Allocation& a : allocations) {
      if (a.bytes == 0) continue;
      cursor = (cursor + a.alignment - 1) / a.alignment * a.alignment + a.bytes;
    }
    if (cursor - base > worst) worst = cursor - base;
  }
  return worst;
}

Error allocate_sections(MemoryAllocator& allocator, const Allocation (&allocations)[kNumSections],
                        void* (&out)[kNumSections]) {
  for (size_t i = 0; i < kNumSections; ++i) {
    out[i] = nullptr;
    if (allocations[i].bytes == 0) continue;
    out[i] = allocator.allocate(allocations[i].bytes, allocations[i].alignment);
    if (out[i] == nullptr) {
      KILN_LOG(Error, "method allocator: no room for %zu bytes of %s (%zu of %zu bytes free)",
               allocations[i].bytes, kSectionNames[i], allocator.free_bytes(), allocator.size());
      return Error::MemoryAllocationFailed;
    }
  }
  return Error::Ok;
}

}  // namespace internal
}  // namespace kiln
