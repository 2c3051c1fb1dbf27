// Method::init: builds a method in the caller's memory — the sections method_layout.h
// counts, the value table (method_values.cpp), the instructions
// (method_instructions.cpp) and the delegates (method_delegates.cpp) — checking every
// index the program holds.
#include <cinttypes>
#include <cstring>
#include <new>

#include "kiln_schema/program_generated.h"
#include "runtime/executor/flatbuffer_vectors.h"
#include "runtime/executor/method.h"
#include "runtime/executor/method_init_state.h"
#include "runtime/executor/method_layout.h"
#include "runtime/executor/method_state.h"
#include "runtime/executor/program.h"
#include "runtime/platform/log.h"

namespace kiln {

using flatbuffers::uoffset_t;
using internal::check_value_index;
using internal::InitState;
using internal::length;
using internal::PreparedInstruction;
using internal::SectionCursor;

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
  KILN_TRY(internal::check_planned_buffers(*plan_, memory_));

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
  KILN_TRY(internal::parse_values(s));
  values_ = values;
  num_values_ = layout.num_values;
  KILN_TRY(internal::resolve_operators(s));

  auto* instructions = static_cast<PreparedInstruction*>(
      sections[static_cast<size_t>(internal::Section::Instructions)]);
  bool missing = false;
  for (size_t pc = 0; pc < layout.num_instructions; ++pc) {
    const kiln_pte::Instruction* instruction =
        plan_->chains()->Get(0)->instructions()->Get(static_cast<uoffset_t>(pc));
    KILN_TRY(internal::prepare_instruction(s, *instruction, pc, layout.num_instructions, &instructions[pc],
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
    KILN_LOG(Info, "method %s has %" PRIu32 " chains; only chain 0 runs", method_meta().name(),
             plan_->chains()->size());
  }
  instructions_ = instructions;
  num_instructions_ = layout.num_instructions;
  zero_state_without_initial_value();

  // Inputs: tensors must be given data before execute; other kinds have a value.
  input_set_ = static_cast<bool*>(sections[static_cast<size_t>(internal::Section::InputFlags)]);
  input_is_read_ = input_set_ + num_inputs_;
  for (size_t i = 0; i < num_inputs_; ++i) {
    input_set_[i] = !values_[input_value_index(i)].is_tensor();
  }
  mark_read_inputs();

  // Delegates last: their init may be expensive, and everything else is valid now.
  delegates_ = static_cast<internal::DelegateInstance*>(
      sections[static_cast<size_t>(internal::Section::Delegates)]);
  KILN_TRY(internal::init_delegates(s, *memory_.method_allocator, delegates_, layout.num_delegates,
                                    &num_delegates_));
  initialized_ = true;
  return Error::Ok;
}

void Method::zero_state_without_initial_value() {
  // One pass over the instructions; a state written back twice is zeroed twice.
  if (num_instructions_ == 0) return;  // the plan may have no chain then
  const auto* instructions = plan_->chains()->Get(0)->instructions();
  for (size_t pc = 0; pc < num_instructions_; ++pc) {
    const int64_t state = internal::state_written_back_by(
        *plan_, *instructions->Get(static_cast<uoffset_t>(pc)));
    if (state < 0 || internal::has_initial_state(*plan_, static_cast<size_t>(state))) continue;
    Tensor& tensor = values_[state].to_tensor();
    std::memset(tensor.mutable_data_ptr(), 0, tensor.nbytes());
  }
}

void Method::mark_read_inputs() {
  auto reads = [&](int64_t value_index) {
    for (size_t i = 0; i < num_inputs_; ++i) {
      if (static_cast<int64_t>(input_value_index(i)) == value_index) input_is_read_[i] = true;
    }
  };
  for (size_t i = 0; i < num_inputs_; ++i) input_is_read_[i] = false;
  for (size_t pc = 0; pc < num_instructions_; ++pc) {
    const PreparedInstruction& instruction = instructions_[pc];
    for (EValue* arg : instruction.args) {
      const int64_t index = arg - values_;
      reads(index);
      // An int list argument reads the Int values it boxes (a size from an input).
      if (arg->is_int_list()) {
        const auto* list = plan_->values()->Get(static_cast<uoffset_t>(index))->val_as_IntList();
        for (size_t k = 0; list != nullptr && k < length(list->items()); ++k) {
          reads(list->items()->Get(static_cast<uoffset_t>(k)));
        }
      }
    }
    if (instruction.kind == PreparedInstruction::Kind::Move ||
        instruction.kind == PreparedInstruction::Kind::JumpFalse) {
      reads(instruction.a);
    }
  }
}

}  // namespace kiln
