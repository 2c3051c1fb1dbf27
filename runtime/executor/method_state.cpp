// Which planned tensors are state (see method_state.h for the rule and why).
#include "runtime/executor/method_state.h"

#include <cstring>

#include "kiln_schema/program_generated.h"
#include "runtime/executor/flatbuffer_vectors.h"

namespace kiln::internal {
namespace {

using flatbuffers::uoffset_t;

bool equals(const flatbuffers::String* s, const char* text) {
  const size_t n = std::strlen(text);
  return s != nullptr && s->size() == n && std::memcmp(s->data(), text, n) == 0;
}

bool is_write_back_operator(const kiln_pte::ExecutionPlan& plan, int32_t op_index) {
  if (op_index < 0 || static_cast<size_t>(op_index) >= length(plan.operators())) return false;
  const kiln_pte::Operator* op = plan.operators()->Get(static_cast<uoffset_t>(op_index));
  const flatbuffers::String* overload = op->overload();
  return equals(op->name(), kStateWriteBackOperator) &&
         (string_length(overload) == 0 || equals(overload, "default"));
}

const kiln_pte::Tensor* planned_tensor(const kiln_pte::ExecutionPlan& plan, size_t index) {
  if (index >= length(plan.values())) return nullptr;
  const kiln_pte::Tensor* tensor =
      plan.values()->Get(static_cast<uoffset_t>(index))->val_as_Tensor();
  return tensor != nullptr && tensor->allocation_info() != nullptr ? tensor : nullptr;
}

bool is_method_input(const kiln_pte::ExecutionPlan& plan, int32_t index) {
  for (size_t i = 0; i < length(plan.inputs()); ++i) {
    if (plan.inputs()->Get(static_cast<uoffset_t>(i)) == index) return true;
  }
  return false;
}

}  // namespace

int64_t state_written_back_by(const kiln_pte::ExecutionPlan& plan,
                              const kiln_pte::Instruction& instruction) {
  const kiln_pte::KernelCall* call = instruction.instr_args_as_KernelCall();
  if (call == nullptr || !is_write_back_operator(plan, call->op_index())) return -1;
  const auto* args = call->args();
  // copy_(self, src, non_blocking, out): in place when `out` is `self`.
  if (length(args) < 2) return -1;
  const int32_t self = args->Get(0);
  if (self < 0 || args->Get(static_cast<uoffset_t>(args->size() - 1)) != self) return -1;
  if (planned_tensor(plan, static_cast<size_t>(self)) == nullptr) return -1;
  if (is_method_input(plan, self)) return -1;
  return self;
}

bool has_initial_state(const kiln_pte::ExecutionPlan& plan, size_t index) {
  const kiln_pte::Tensor* tensor = planned_tensor(plan, index);
  return tensor != nullptr && tensor->data_buffer_idx() != 0;
}

}  // namespace kiln::internal
