#include "examples/arm/executor_runner/operator_timing.h"

#include <cstdio>

#include "examples/arm/platform/board.h"
#include "kiln_schema/program_generated.h"
#include "runtime/platform/platform.h"

namespace kiln::firmware {
namespace {

const kiln_pte::Instruction* instruction_at(const MethodMeta& meta, size_t index) {
  const auto* chains = meta.plan()->chains();
  if (chains == nullptr || chains->size() == 0) return nullptr;
  const auto* instructions = chains->Get(0)->instructions();
  if (instructions == nullptr || index >= instructions->size()) return nullptr;
  return instructions->Get(static_cast<flatbuffers::uoffset_t>(index));
}

/// Ticks -> instructions under `-icount shift=0` (one instruction per virtual ns).
uint64_t ticks_to_instructions(uint64_t ticks) {
  return ticks * 1000000000ull / board_tick_hz();
}

}  // namespace

void OperatorTiming::start() {
  running_ = 0;
  board_set_activity_describer(&OperatorTiming::describe_running, this);
}

void OperatorTiming::stop() { board_set_activity(nullptr); }

void OperatorTiming::describe_running(void* self, char* buffer, size_t size) {
  const OperatorTiming& timing = *static_cast<const OperatorTiming*>(self);
  const MethodMeta& meta_ = timing.meta_;
  const size_t index = timing.running_;
  const kiln_pte::Instruction* instruction = instruction_at(meta_, index);
  const char* name = "?";
  const char* overload = "";
  const char* dot = "";
  if (instruction != nullptr) {
    const auto* plan = meta_.plan();
    if (const auto* call = instruction->instr_args_as_KernelCall()) {
      const auto* ops = plan->operators();
      if (ops != nullptr && call->op_index() >= 0 && static_cast<size_t>(call->op_index()) < ops->size()) {
        const kiln_pte::Operator* op = ops->Get(static_cast<flatbuffers::uoffset_t>(call->op_index()));
        if (op->name() != nullptr) name = op->name()->c_str();
        if (op->overload() != nullptr && op->overload()->size() > 0) {
          overload = op->overload()->c_str();
          dot = ".";
        }
      }
    } else if (const auto* call = instruction->instr_args_as_DelegateCall()) {
      const auto* delegates = plan->delegates();
      if (delegates != nullptr && call->delegate_index() >= 0 &&
          static_cast<size_t>(call->delegate_index()) < delegates->size()) {
        const auto* delegate = delegates->Get(static_cast<flatbuffers::uoffset_t>(call->delegate_index()));
        if (delegate->id() != nullptr) name = delegate->id()->c_str();
        overload = " (delegate)";
      }
    } else {
      name = kiln_pte::EnumNameInstructionArguments(instruction->instr_args_type());
    }
  }
  std::snprintf(buffer, size, "instruction %zu (%s%s%s)", index, name, dot, overload);
}

void OperatorTiming::begin_instruction(uint32_t chain, uint32_t instruction_id, const char* name) {
  running_ = instruction_id;
  running_name_ = name;
  start_ticks_ = kiln_pal_current_ticks();
}

void OperatorTiming::end_instruction() {
  const uint64_t ticks = kiln_pal_current_ticks() - start_ticks_;
  const size_t index = running_;
  const char* const op_name = running_name_;
  total_ticks_ += ticks;
  const kiln_pte::Instruction* instruction = instruction_at(meta_, index);
  const bool is_delegate =
      instruction != nullptr && instruction->instr_args_type() == kiln_pte::InstructionArguments::DelegateCall;
  // Names are keyed by address: the method gives the same pointer for every call of
  // one operator, so no string is compared between instructions.
  Entry* entry = nullptr;
  for (size_t i = 0; i < num_entries_ && entry == nullptr; ++i) {
    if (entries_[i].name == op_name) entry = &entries_[i];
  }
  if (entry == nullptr) {
    if (num_entries_ < kMaxEntries) {
      entry = &entries_[num_entries_++];
      entry->name = op_name;
    } else {
      entry = &entries_[kMaxEntries - 1];
      entry->name = "(other)";
    }
    entry->is_delegate = is_delegate;
  }
  entry->calls += 1;
  entry->ticks += ticks;
  running_ = index + 1;
}

void OperatorTiming::print() const {
  board_printf("I [runner] per-operator time (system counter %lu Hz; with -icount shift=0 "
               "~instructions = ticks x 1e9 / %lu):\n",
               static_cast<unsigned long>(board_tick_hz()), static_cast<unsigned long>(board_tick_hz()));
  board_printf("I [runner]   %-44s %6s %12s %14s\n", "operator", "calls", "ticks", "~instructions");
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < num_entries_; ++i) {
      const Entry& e = entries_[i];
      if (e.is_delegate != (pass == 1)) continue;
      board_printf("I [runner]   %-44s %6lu %12llu %14llu%s\n", e.name != nullptr ? e.name : "?",
                   static_cast<unsigned long>(e.calls), static_cast<unsigned long long>(e.ticks),
                   static_cast<unsigned long long>(ticks_to_instructions(e.ticks)),
                   e.is_delegate ? "  (delegate)" : "");
    }
  }
  board_printf("I [runner]   %-44s %6s %12llu %14llu\n", "all instructions", "",
               static_cast<unsigned long long>(total_ticks_),
               static_cast<unsigned long long>(ticks_to_instructions(total_ticks_)));
}

}  // namespace kiln::firmware
