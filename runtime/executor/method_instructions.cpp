// Method init, the instructions: operators resolved against the kernel registry, each
// instruction's arguments and targets checked and prepared for execute.
#include "kiln_schema/program_generated.h"
#include "runtime/executor/flatbuffer_vectors.h"
#include "runtime/executor/method_init_state.h"
#include "runtime/executor/value_parsing.h"
#include "runtime/kernel/operator_registry.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace internal {

using flatbuffers::uoffset_t;

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

namespace {

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

}  // namespace

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

}  // namespace internal
}  // namespace kiln
